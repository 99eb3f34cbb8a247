"""The notifications' entry: what the runtime hands events to (`observe`), what the
notifications queue's function calls (`handle`), and the upkeep's part (`judge_deadlines`,
`purge`)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from scheduler_lib.config import Settings
from scheduler_lib.domain import CollectionRecord
from scheduler_lib.domain.outcomes import Event
from scheduler_lib.notify import deadman
from scheduler_lib.notify.notice import Notice
from scheduler_lib.notify.rules import notices_of
from scheduler_lib.notify.worker import NotificationWorker, NotifyReport
from scheduler_lib.store import TableStore, purge_notices
from scheduler_lib.store.execution_queue import ExecutionQueue
from scheduler_lib.timeutil import Clock
from scheduler_lib.wire import deadman as deadman_wire

log = logging.getLogger("scheduler.notify")


class Notifier:
    """Notices in (from events and the dead-man switch), deliveries out (the worker)."""

    def __init__(
        self, store: TableStore, settings: Settings, clock: Clock, adapters: Mapping[str, Any]
    ) -> None:
        self.store = store
        self.clock = clock
        self.queue = ExecutionQueue(settings, name=settings.notify_queue_name)
        self.worker = NotificationWorker(store, self.queue, settings, adapters)

    def observe(self, event: Event) -> None:
        """Put the notices `event` makes on the queue: a small message, nothing read; a
        failure is logged, never raised into the executor's or the dispatcher's work."""
        try:
            for notice in notices_of(event, self.clock()):
                self.send(notice)
        except Exception:
            log.exception("a notice could not be queued")

    def send(self, notice: Notice) -> None:
        self.queue.send_body(notice.to_json())

    def handle(self, body: str) -> NotifyReport:
        """One message of the notifications queue (its queue trigger)."""
        return self.worker.handle(body, now=self.clock())

    def judge_deadlines(self, now: datetime) -> int:
        """The dead-man switch's part of a tick's upkeep."""
        return deadman.judge(self.store, self.send, now=now)

    def purge(self, now: datetime) -> int:
        """The daily housekeeping's part: records past their retention."""
        return purge_notices(self.store, now=now)


def watched_default_changed(before: CollectionRecord, after: CollectionRecord) -> bool:
    """Whether a collection's default dead-man window changed (its jobs are re-armed)."""
    name = deadman_wire.PROPERTY
    return before.properties.get(name) != after.properties.get(name)
