"""The due index: which jobs have an occurrence due in which UTC minute.

`JobDueIndex`: PartitionKey = the UTC minute an occurrence is due (`yyyyMMddHHmm`),
RowKey = the job key. The dispatcher reads a PartitionKey range (from its cursor to one
minute ahead), so a tick costs what is due, not how many jobs exist. A row is only a hint:
the job entity's `nextExecutionTime` decides, so a stale row (job deleted, rescheduled or
disabled) is harmless and is dropped by the dispatcher.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime

from azure.core.exceptions import ResourceNotFoundError
from azure.data.tables import UpdateMode

from scheduler_lib.store.tables import TableStore, as_datetime

TABLE = "JobDueIndex"
MINUTE_FORMAT = "%Y%m%d%H%M"


@dataclass(frozen=True)
class DueRow:
    """One job's occurrence due in one minute, or a parked execution message.

    A parked message (`payload` set) is a retry whose delay exceeds what a Storage queue
    accepts: the dispatcher sends `payload` as it is when its minute comes.
    """

    job_key: str
    due: datetime
    payload: str | None = None
    row_key: str = ""

    @property
    def minute(self) -> str:
        return minute_key(self.due)


def minute_key(instant: datetime) -> str:
    """The PartitionKey of the minute containing `instant` (UTC)."""
    return instant.astimezone(UTC).strftime(MINUTE_FORMAT)


def add_due(store: TableStore, job_key: str, due: datetime) -> DueRow:
    """Record that `job_key` has an occurrence at `due` (idempotent)."""
    store.table(TABLE).upsert_entity(
        {"PartitionKey": minute_key(due), "RowKey": job_key, "Due": due.astimezone(UTC)},
        mode=UpdateMode.REPLACE,
    )
    return DueRow(job_key, due, row_key=job_key)


def park_message(store: TableStore, job_key: str, tag: str, payload: str, due: datetime) -> DueRow:
    """Park an execution message until `due` (idempotent per job and tag)."""
    row_key = f"{job_key}|{tag}"
    store.table(TABLE).upsert_entity(
        {
            "PartitionKey": minute_key(due),
            "RowKey": row_key,
            "JobKey": job_key,
            "Due": due.astimezone(UTC),
            "Payload": payload,
        },
        mode=UpdateMode.REPLACE,
    )
    return DueRow(job_key, due, payload, row_key)


def remove_due(store: TableStore, row_key: str, due: datetime) -> None:
    """Drop a row (`DueRow.row_key`, which is the job key for an occurrence row); a row
    already gone is fine (another tick or the API removed it)."""
    with suppress(ResourceNotFoundError):
        store.table(TABLE).delete_entity(minute_key(due), row_key)


def due_rows(store: TableStore, *, start: datetime, through: datetime) -> Iterator[DueRow]:
    """Rows of the minutes from the one containing `start` through the one containing
    `through`, oldest minute first: one PartitionKey range scan."""
    entities = store.table(TABLE).query_entities(
        "PartitionKey ge @lo and PartitionKey le @hi",
        parameters={"lo": minute_key(start), "hi": minute_key(through)},
    )
    for entity in entities:
        due = as_datetime(entity.get("Due"))
        if due is not None:
            job_key = entity.get("JobKey") or entity["RowKey"]
            yield DueRow(job_key, due, entity.get("Payload"), entity["RowKey"])
