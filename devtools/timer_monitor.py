"""The timer trigger's schedule monitor (`use_monitor=True`), for the local host.

With `use_monitor` the Functions host keeps each timer's status in storage (`Last`, `Next`,
`LastUpdated`: a blob per function in its `azure-webjobs-hosts` container). When the host
starts, it runs the function at once only if that recorded next occurrence has passed: an
occurrence was missed while no host ran. A host started for the first time records the next
occurrence and waits for it; one restarted before the next occurrence waits too. After each
run, failed or not, it records the run and the occurrence after it.

The local host keeps the same status in its own storage (the `SchedulerState` table,
partition `timers`, one row per function name), so that `make run` after a break behaves as
a deployment restarted after one: one dispatcher tick at start-up if a minute went by
unseen (its cursor then covers every missed minute), none otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from azure.core.exceptions import ResourceNotFoundError
from azure.data.tables import UpdateMode

from scheduler_lib.store.tables import TableStore, as_datetime

TABLE = "SchedulerState"
PARTITION = "timers"


@dataclass(frozen=True)
class ScheduleStatus:
    """What the host records for a monitored timer (`last` is None before its first run)."""

    last: datetime | None
    next: datetime
    last_updated: datetime


class TimerMonitor:
    """One timer's status in storage; `schedule(now)` is its next occurrence after `now`."""

    def __init__(
        self, store: TableStore, function: str, schedule: Callable[[datetime], datetime]
    ) -> None:
        self.store = store
        self.function = function
        self.schedule = schedule

    def status(self) -> ScheduleStatus | None:
        try:
            entity = self.store.table(TABLE).get_entity(PARTITION, self.function)
        except ResourceNotFoundError:
            return None
        return ScheduleStatus(
            as_datetime(entity.get("Last")),
            _required(as_datetime(entity["Next"])),
            _required(as_datetime(entity["LastUpdated"])),
        )

    def save(self, status: ScheduleStatus) -> None:
        entity: dict[str, Any] = {
            "PartitionKey": PARTITION,
            "RowKey": self.function,
            "Next": status.next,
            "LastUpdated": status.last_updated,
        }
        if status.last is not None:  # Table storage has no null: absent means "never ran"
            entity["Last"] = status.last
        self.store.table(TABLE).upsert_entity(entity, mode=UpdateMode.REPLACE)

    def past_due(self, now: datetime) -> bool:
        """At start-up: was an occurrence missed since the last recorded run? Without a
        status (the first start), record the next occurrence and say no."""
        status = self.status()
        if status is None:
            self.save(ScheduleStatus(None, self.schedule(now), now))
            return False
        return now > status.next

    def record_run(self, occurrence: datetime, now: datetime) -> None:
        """After a run (of `occurrence`, or of the missed one at start-up): the next one."""
        self.save(ScheduleStatus(occurrence, self.schedule(max(occurrence, now)), now))


def _required(value: datetime | None) -> datetime:
    if value is None:
        raise ValueError("a timer status without its next occurrence")
    return value
