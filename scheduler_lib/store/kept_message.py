"""A queue message this worker sent and keeps hidden while it lives: an attempt's watchdog
(`execution.heartbeat.Watchdog`, `execution.watchdog`), which must be delivered only once
its worker stopped beating.

Sent with a visibility just after `hold` from its start (the claim now, or a second still
waited for); each `keep_hidden` pushes that visibility again from now (Update Message on
its pop receipt, which the update replaces), so it is delivered `hold` after the last beat
that got through, never while the beats go on. One that became visible anyway (a beat that
did not get through in time) and was taken is no longer this worker's: its pop receipt no
longer matches, the update says so (`ExecutionQueue.postpone` returns None), and it is left
to whoever took it (`taken`), and not deleted at the end either.
"""

from __future__ import annotations

import logging
import math
from datetime import datetime, timedelta

from scheduler_lib.store.execution_queue import ExecutionQueue, SentMessage
from scheduler_lib.timeutil import Clock

log = logging.getLogger("scheduler.queue")


class KeptMessage:
    """One message of this worker's, visible `hold` after its start or its last beat (see
    the module); sent at most once."""

    def __init__(self, queue: ExecutionQueue, clock: Clock, hold: timedelta) -> None:
        self.queue, self.clock, self.hold = queue, clock, hold
        self.sent: SentMessage | None = None
        self.taken = False

    def _delay(self, start: datetime | None) -> int:
        """Whole seconds from now to `hold` after `start` or now, whichever is later: never
        earlier (rounded up)."""
        now = self.clock()
        at = max(now, start or now)
        return math.ceil((at + self.hold - now).total_seconds())

    def send_once(self, body: str, *, start: datetime | None = None) -> None:
        """Send `body`, unless sent already."""
        if self.sent is None:
            self.sent = self.queue.send_body(body, delay_seconds=self._delay(start))

    def keep_hidden(self, *, start: datetime | None = None) -> None:
        """Push its visibility to `hold` after now (or after `start`, if later); nothing if
        not sent or taken. Raises what the queue raised: the message is then visible no
        earlier than `hold` after the last beat that got through, and the next one tries
        again."""
        if self.sent is None or self.taken:
            return
        kept = self.queue.postpone(self.sent, delay_seconds=self._delay(start))
        if kept is None:
            self.taken = True
            log.info("message %s was taken while its sender lives", self.sent.id)
        else:
            self.sent = kept

    def discard(self) -> None:
        """Delete it at the end, if it was sent and is still this worker's."""
        if self.sent is not None and not self.taken:
            self.queue.discard(self.sent)
