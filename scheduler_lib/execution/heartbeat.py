"""The worker's side of a claim's lease (`lease`): send the attempt's watchdog, renew the
lease while the attempt runs, and delete the watchdog when the attempt ends normally.

When the watchdog is sent is the deployment's choice (`SCHEDULER_WATCHDOG`,
`WatchdogChoice`): at the start (`claim`, the default), or with the heartbeat's first
renewal (`heartbeat`), so that an attempt that ends before that beat (most: an HTTP call
of well under a second after a wait of at most 2 s for its second) makes no queue operation
for it, and one that dies before it is left to the host's redelivery of its message (~10
minutes late: a Rerun if it had claimed, Postponed past the grace period if it died in an
early occurrence's wait). The beats are counted from the start of the watch.

An occurrence delivered early is claimed only at its second (`watched` with `claim_at`), so
with `claim` its watchdog is sent before the wait: a worker that dies in the wait leaves no
claim, and that watchdog (`before_claim`) runs the attempt (`watchdog.look`). The heartbeat
renews nothing until the attempt is claimed.

Each beat also keeps the attempt's watchdog hidden (`Watchdog`, a `KeptMessage`): past
the lease it just renewed, or, in the wait, past the lease of a claim at the second, so the
watchdog is delivered only once its worker stopped beating (see `watchdog`). A worker whose
wait overran the second by a lease (starved of CPU) is thus still the one to claim it,
where its watchdog used to run the occurrence as unclaimed and the worker's own claim then
ended as a Duplicate.

The renewal runs on a thread of its own, since the attempt's own thread is inside the
action (an HTTP call of up to 60 s), started at the first beat (`beats`: most
attempts end before it, and start none); it extends the lease of the claim this worker holds
in the job as this worker last wrote it (its claim, then its last renewal: no read), and
writes it ETag-conditionally, so it never undoes another writer's change (read again and
re-applied on a conflict). When the claim is no longer this worker's (done, or taken over
by a watchdog after this worker was cut off too long) it stops, and says so (`lost`): an
attempt that has not started its action yet then does not start it.

An attempt that raises leaves its watchdog in the queue, if it sent one: its claim stays
open, and the watchdog takes it over once the lease runs out (sooner than the host's retry
of a failed invocation, and whatever the host does). One that had not sent it is run again
by that retry (host.json `visibilityTimeout`, 30 s), a Rerun like the takeover.

A batch's members share one watchdog message with `claim` (`batch_watchdog`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime

from scheduler_lib.beats import Beats
from scheduler_lib.domain import JobRecord
from scheduler_lib.domain.executor_state import executor_state, step_claim
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.errors import NotFoundError, PreconditionFailedError
from scheduler_lib.execution import lease, lifecycle
from scheduler_lib.later_calls import LATER, LaterCalls
from scheduler_lib.store import LostRace, TableStore, find_job, put_job, retry_lost_races
from scheduler_lib.store.execution_queue import ExecutionQueue
from scheduler_lib.store.kept_message import KeptMessage
from scheduler_lib.timeutil import Clock
from scheduler_lib.watchdog_choice import WatchdogChoice

log = logging.getLogger("scheduler.execute")


def renewed(
    record: JobRecord, message: ExecutionMessage, message_id: str, now: datetime
) -> JobRecord | None:
    """`record` with the lease of `message`'s step extended from `now`, if this worker
    (`message_id`) still holds the step; None when it does not."""
    claim = step_claim(record, message)
    if claim is None or claim.message_id != message_id or not lease.held(claim):
        return None
    state = executor_state(record)
    extended = replace(claim, lease_until=lifecycle.lease_from(now))
    claims = {**state.claims, message.execution_tag: extended}
    return lifecycle.with_state(record, replace(state, claims=claims))


def renew(
    store: TableStore,
    message: ExecutionMessage,
    message_id: str,
    clock: Clock,
    known: JobRecord | None = None,
) -> JobRecord | None:
    """Extend the lease this worker holds (ETag loop): the job as written (its new ETag), or
    None when it holds it no longer. `known`: the job as this worker last wrote it (its
    claim, or its last renewal), renewed without a read; read again only when the write
    finds it changed since (anyone else's write: the attempt's finish, the dispatcher, the
    API)."""

    def attempt() -> JobRecord | None:
        nonlocal known
        record, known = known or find_job(store, message.job_key), None  # in hand: once
        if record is None or not message.belongs_to(record.incarnation):
            return None
        updated = renewed(record, message, message_id, clock())
        if updated is None:
            return None
        try:
            return put_job(store, updated, etag=record.etag)
        except (PreconditionFailedError, NotFoundError) as exc:
            raise LostRace from exc

    return retry_lost_races(attempt, what=f"Job '{message.job_key}'")


#: A watchdog is visible this long after the claim it watches, or after its last beat.
PAST_LEASE = lease.LEASE + lease.MARGIN


class Watchdog(KeptMessage):
    """The attempt's own watchdog message (see `watchdog`): kept hidden by its heartbeat."""

    def __init__(self, queue: ExecutionQueue, message: ExecutionMessage, clock: Clock) -> None:
        super().__init__(queue, clock, PAST_LEASE)
        self.message = message

    def send(self, *, claim_at: datetime | None = None) -> None:
        """Send it (once): visible just after the lease of a claim taken now, or at
        `claim_at` (an early delivery's second, not claimed yet: `before_claim`, even when
        that second has passed by now, since the claim is still to be written), would run
        out."""
        watching = self.message.watching(before_claim=claim_at is not None)
        self.send_once(watching.to_json(), start=claim_at)


class Heartbeat(Beats):
    """Renews a claim's lease every `interval` seconds (real time) until stopped, once the
    attempt is `claimed` (an early delivery is claimed at its second `claim_at`, after the
    wait). Its own `watchdog` (none for a batch's member: the batch keeps its own) is sent
    with the first renewal that succeeds if it was not at the start (`heartbeat` choice),
    and kept hidden past each renewed lease, or the wait's. Its thread starts at the first
    beat (`beats`)."""

    def __init__(
        self,
        store: TableStore,
        message: ExecutionMessage,
        message_id: str,
        clock: Clock,
        interval: float = lease.HEARTBEAT,
        watchdog: Watchdog | None = None,
        claim_at: datetime | None = None,
        later: LaterCalls = LATER,
    ) -> None:
        super().__init__(interval, name="heartbeat", later=later)
        self.store, self.message, self.message_id = store, message, message_id
        self.clock, self.watchdog = clock, watchdog
        self.claim_at = claim_at
        self.lost = False
        self.claimed = threading.Event()
        #: The job as this worker last wrote it (`claim_with`, then each renewal).
        self.known: JobRecord | None = None

    def claim_with(self, record: JobRecord | None) -> None:
        """The attempt is claimed, `record` being the job as the claim wrote it (the first
        renewal starts from it: no read)."""
        self.known = record
        self.claimed.set()

    def stop(self) -> JobRecord | None:
        """Stop renewing, a renewal in progress ended first; the job as this worker last wrote
        it (None: claim lost, or a beat failed), so its update does not fail on that ETag."""
        self.stop_beats()
        return None if self.lost else self.known

    def _beat(self) -> bool:
        """One beat; False once the claim is this worker's no longer (no more beats)."""
        dog = self.watchdog
        try:
            if not self.claimed.is_set():  # nothing of this worker's to renew yet
                if dog is not None:
                    dog.keep_hidden(start=self.claim_at)
                return True
            known, self.known = self.known, None  # a failed beat reads next time
            self.known = renew(self.store, self.message, self.message_id, self.clock, known)
            if self.known is None:
                self.lost = True
                return False
            if dog is not None:  # after the renewal: visible after its lease
                if dog.sent is None:
                    dog.send()  # the `heartbeat` choice; a failed send: the next beat
                else:
                    dog.keep_hidden()
        except Exception:  # storage unreachable: the next beat tries again
            job = {"job": self.message.job_key}
            log.warning("lease or watchdog not renewed", exc_info=True, extra=job)
        return True


@contextmanager
def watched(
    store: TableStore,
    queue: ExecutionQueue,
    message: ExecutionMessage,
    message_id: str,
    clock: Clock,
    *,
    choice: WatchdogChoice = WatchdogChoice.CLAIM,
    interval: float = lease.HEARTBEAT,
    claim_at: datetime | None = None,
    covered: bool = False,
    record: JobRecord | None = None,
) -> Iterator[Heartbeat]:
    """The attempt `message`, watched while the block runs (see the module): claimed, or to
    be claimed at `claim_at` (an early delivery's second, after the wait: the block sets
    `Heartbeat.claimed` once the claim is written). Never by the clock: a thread that reaches
    this after the second (a starved worker) has still not written its claim, and a renewal
    before that write would find none, take the attempt for taken over and drop it, with its
    watchdog deleted and no one else to run it. `interval`: the heartbeat's, in real seconds
    (tests shorten it). `covered`: a batch member whose batch sent its watchdog
    (`BatchWatchdog`), so it sends none of its own. `record`: the job as its claim wrote it,
    when claimed already (`Heartbeat.claim_with`)."""
    watchdog = Watchdog(queue, message, clock)
    if choice is WatchdogChoice.CLAIM and not covered:
        watchdog.send(claim_at=claim_at)
    own = None if covered and choice is WatchdogChoice.CLAIM else watchdog
    beat = Heartbeat(store, message, message_id, clock, interval, own, claim_at)
    if claim_at is None:  # claimed already; otherwise only once the claim is written
        beat.claim_with(record)
    beat.start()
    try:
        yield beat
    finally:
        beat.stop()  # joined: whether the beat sent the watchdog is known from here
    watchdog.discard()  # not reached when the attempt raised: the watchdog (if sent) stays
