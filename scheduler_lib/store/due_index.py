"""The due index: which jobs have an occurrence due in which UTC minute.

`JobDueIndex`: PartitionKey = the UTC minute an occurrence is due (`yyyyMMddHHmm`),
RowKey = the job key. The dispatcher reads a PartitionKey range (from its cursor to one
minute ahead), so a tick costs what is due, not how many jobs exist. A row is only a hint:
the job entity's `nextExecutionTime` decides, so a stale row (job deleted, rescheduled or
disabled) is harmless and is dropped by the dispatcher.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar

from azure.core.exceptions import ResourceModifiedError, ResourceNotFoundError
from azure.data.tables import TableTransactionError, UpdateMode

from scheduler_lib.store.tables import TableStore, as_datetime, etag_kwargs

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
    etag: str | None = None  # as read: a batched removal leaves a row rewritten since alone
    #: The partition it was read from: the minute of `due`, except for a row re-indexed by
    #: `reindex_overdue` into a minute the dispatcher still reads.
    partition: str | None = None

    @property
    def minute(self) -> str:
        return self.partition or minute_key(self.due)


def minute_key(instant: datetime) -> str:
    """The PartitionKey of the minute containing `instant` (UTC)."""
    return instant.astimezone(UTC).strftime(MINUTE_FORMAT)


#: Entities one table transaction may hold (all in one partition).
TRANSACTION_LIMIT = 100
T = TypeVar("T")


def _occurrence_row(job_key: str, due: datetime) -> dict[str, object]:
    return {"PartitionKey": minute_key(due), "RowKey": job_key, "Due": due.astimezone(UTC)}


def add_due(
    store: TableStore, job_key: str, due: datetime, *, incarnation: str = "", at: str | None = None
) -> DueRow:
    """Record that `job_key` has an occurrence at `due` (idempotent). `incarnation` marks the
    row as the API wrote it for that incarnation of the job (see `remove_incarnation_row`);
    `at` files it under another minute than `due`'s (see `reindex_overdue`)."""
    row = _occurrence_row(job_key, due)
    if incarnation:
        row["Incarnation"] = incarnation
    if at is not None:
        row["PartitionKey"] = at
    store.table(TABLE).upsert_entity(row, mode=UpdateMode.REPLACE)
    return DueRow(job_key, due, row_key=job_key, partition=at)


def has_due_row(store: TableStore, job_key: str, due: datetime) -> bool:
    """Whether the row of `job_key`'s occurrence at `due` exists (one point read)."""
    try:
        store.table(TABLE).get_entity(minute_key(due), job_key, select=["RowKey"])
    except ResourceNotFoundError:
        return False
    return True


def reindex_overdue(store: TableStore, job_key: str, due: datetime, *, now: datetime) -> DueRow:
    """A row for an occurrence at `due` that lies in a minute no tick reads any more (its row
    was lost), filed under the minute of `now`: the next tick finds it there and applies its
    grace and postponement rules to `due`."""
    return add_due(store, job_key, due, at=minute_key(now))


def remove_incarnation_row(
    store: TableStore, job_key: str, due: datetime, incarnation: str
) -> bool:
    """Drop the row of `job_key` at `due` only if the API wrote it for `incarnation` (read,
    then deleted on the ETag read): a deleted job's row, never the row of the job created
    again under the same name meanwhile. A row it cannot attribute (written by a tick) is
    left: the dispatcher drops it as stale, ETag-conditionally. True if it removed one."""
    if not incarnation:
        return False
    try:
        entity = store.table(TABLE).get_entity(minute_key(due), job_key)
    except ResourceNotFoundError:
        return False
    if entity.get("Incarnation") != incarnation:
        return False
    with suppress(ResourceNotFoundError, ResourceModifiedError):
        store.table(TABLE).delete_entity(
            minute_key(due), job_key, **etag_kwargs(entity.metadata.get("etag"))
        )
        return True
    return False


def add_due_rows(store: TableStore, occurrences: Iterable[tuple[str, datetime]]) -> None:
    """`add_due` for many (job key, due) pairs: one transaction per minute partition and
    `TRANSACTION_LIMIT` rows instead of a round trip each (a tick moves hundreds of jobs
    whose next occurrences often share a minute: every day at 09:00)."""
    rows = {(minute_key(due), key): _occurrence_row(key, due) for key, due in occurrences}
    for batch in _batches(rows):
        store.table(TABLE).submit_transaction(
            [("upsert", row, {"mode": UpdateMode.REPLACE}) for row in batch]
        )


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


def remove_due(store: TableStore, row_key: str, due: datetime, *, etag: str | None = None) -> None:
    """Drop a row (`DueRow.row_key`, which is the job key for an occurrence row); a row
    already gone is fine (another tick or the API removed it). With `etag`, only the row as
    it was read: one written again since (a job rescheduled into the same minute) stays."""
    with suppress(ResourceNotFoundError, ResourceModifiedError):
        store.table(TABLE).delete_entity(minute_key(due), row_key, **etag_kwargs(etag))


def remove_due_rows(store: TableStore, rows: Iterable[DueRow]) -> None:
    """`remove_due` (with each row's ETag as read) for many rows, a transaction per minute
    partition and `TRANSACTION_LIMIT` rows. A transaction fails whole if one row is gone or
    rewritten, so such a batch is removed row by row."""
    table = store.table(TABLE)
    for batch in _batches({(row.minute, row.row_key): row for row in rows}):
        operations = [
            ("delete", {"PartitionKey": row.minute, "RowKey": row.row_key}, etag_kwargs(row.etag))
            for row in batch
        ]
        try:
            table.submit_transaction(operations)
        except (TableTransactionError, ResourceNotFoundError, ResourceModifiedError):
            for row in batch:
                with suppress(ResourceNotFoundError, ResourceModifiedError):
                    table.delete_entity(row.minute, row.row_key, **etag_kwargs(row.etag))


def _batches(items: dict[tuple[str, str], T]) -> Iterator[list[T]]:
    """Items keyed by (PartitionKey, RowKey) in transaction-sized batches of one partition."""
    by_partition: dict[str, list[T]] = {}
    for (partition, _), item in sorted(items.items(), key=lambda pair: pair[0]):
        by_partition.setdefault(partition, []).append(item)
    for partition_items in by_partition.values():
        for i in range(0, len(partition_items), TRANSACTION_LIMIT):
            yield partition_items[i : i + TRANSACTION_LIMIT]


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
            yield DueRow(
                job_key,
                due,
                entity.get("Payload"),
                entity["RowKey"],
                entity.metadata.get("etag"),
                entity["PartitionKey"],
            )
