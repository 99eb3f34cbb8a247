"""The one watchdog message of a batch's members (`heartbeat` is a lone attempt's side).

A batch's members (`messages.batch_json`) share one watchdog message with `claim`
(`BatchWatchdog`): a batch of each member's watchdog, sent once before the members
start and deleted once all of them ended normally, instead of a send and a delete per
member. It is sent before any member's claim, so each of its members is `before_claim`, and
visible when a lone member's would be: just after the lease of a claim taken now, or of the
latest second a member waits for; a beat of its own keeps it so until the members ended
(one queue update per beat for the whole batch). Delivered, it is a batch like any other:
each member is looked at as a lone watchdog (`watchdog.look`) under its member id, and one
that comes back later sends a lone watchdog of that member only. With `heartbeat` each
member sends its own, as alone.
A member that raises leaves the batch's watchdog in the queue, as a lone attempt leaves its
own: the members that ended are over when it looks, the others are taken over or (never
claimed: `before_claim`) run, where a lone on-time attempt that died before its claim was
left to the host's retry. Members that are watchdogs themselves (a delivered batch's
watchdog) are not covered: each of those sends its own after a takeover, as alone.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta

from scheduler_lib.beats import Beats
from scheduler_lib.domain.messages import ExecutionMessage, batch_json
from scheduler_lib.execution import lease
from scheduler_lib.execution.heartbeat import PAST_LEASE
from scheduler_lib.later_calls import LATER, LaterCalls
from scheduler_lib.store.execution_queue import ExecutionQueue
from scheduler_lib.store.kept_message import KeptMessage
from scheduler_lib.timeutil import Clock
from scheduler_lib.watchdog_choice import WatchdogChoice

log = logging.getLogger("scheduler.execute")


class BatchWatchdog(KeptMessage, Beats):
    """The one watchdog message of a batch's members (see the module): `covered`, the
    indexes of the members it watches (none of them sends its own); sent at most once, and
    kept hidden by a beat of its own (every `interval` real seconds, its thread started at
    the first: `beats`) while the members run."""

    def __init__(
        self,
        queue: ExecutionQueue,
        messages: Sequence[ExecutionMessage],
        clock: Clock,
        interval: float = lease.HEARTBEAT,
        later: LaterCalls = LATER,
    ) -> None:
        KeptMessage.__init__(self, queue, clock, PAST_LEASE)
        Beats.__init__(self, interval, name="batch-watchdog", later=later)
        self.messages = messages
        self.covered: frozenset[int] = frozenset()
        self.latest: datetime | None = None  # the latest second a covered member waits for

    @contextmanager
    def kept(self, choice: WatchdogChoice, *, horizon: timedelta) -> Iterator[None]:
        """`send` it, and keep it hidden while the block (the members) runs."""
        self.send(choice, horizon=horizon)
        try:
            yield
        finally:
            self.stop_beats()  # a beat in progress ends first

    def send(self, choice: WatchdogChoice, *, horizon: timedelta) -> None:
        """With `claim`, send it for every member that is not itself a watchdog (those are
        looked at as alone) and does not start more than `horizon` from now (deferred, not
        held: never claimed by this invocation), if there are any, and start its beat."""
        if choice is not WatchdogChoice.CLAIM or self.sent is not None:
            return
        now = self.clock()
        covered = {
            index for index, message in enumerate(self.messages)
            if not message.watchdog
            and (message.start_at is None or message.start_at - now <= horizon)
        }  # fmt: skip
        if not covered:
            return
        starts = [self.messages[i].start_at for i in covered]
        self.latest = max((start for start in starts if start is not None), default=None)
        watching = [self.messages[i].watching(before_claim=True) for i in sorted(covered)]
        self.send_once(batch_json(watching), start=self.latest)
        self.covered = frozenset(covered)
        self.start()

    def _beat(self) -> bool:
        try:
            self.keep_hidden(start=self.latest)
        except Exception:  # storage unreachable: the next beat tries again
            log.warning("batch watchdog not kept hidden", exc_info=True)
        return True
