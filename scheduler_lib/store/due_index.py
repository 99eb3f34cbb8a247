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

from azure.core import MatchConditions
from azure.core.exceptions import ResourceModifiedError, ResourceNotFoundError
from azure.data.tables import TableTransactionError, UpdateMode

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
    etag: str | None = None  # as read: a batched removal leaves a row rewritten since alone

    @property
    def minute(self) -> str:
        return minute_key(self.due)


def minute_key(instant: datetime) -> str:
    """The PartitionKey of the minute containing `instant` (UTC)."""
    return instant.astimezone(UTC).strftime(MINUTE_FORMAT)


#: Entities one table transaction may hold (all in one partition).
TRANSACTION_LIMIT = 100
IF_UNCHANGED = MatchConditions.IfNotModified


def _occurrence_row(job_key: str, due: datetime) -> dict[str, object]:
    return {"PartitionKey": minute_key(due), "RowKey": job_key, "Due": due.astimezone(UTC)}


def add_due(store: TableStore, job_key: str, due: datetime) -> DueRow:
    """Record that `job_key` has an occurrence at `due` (idempotent)."""
    store.table(TABLE).upsert_entity(_occurrence_row(job_key, due), mode=UpdateMode.REPLACE)
    return DueRow(job_key, due, row_key=job_key)


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


def remove_due(store: TableStore, row_key: str, due: datetime) -> None:
    """Drop a row (`DueRow.row_key`, which is the job key for an occurrence row); a row
    already gone is fine (another tick or the API removed it)."""
    with suppress(ResourceNotFoundError):
        store.table(TABLE).delete_entity(minute_key(due), row_key)


def remove_due_rows(store: TableStore, rows: Iterable[DueRow]) -> None:
    """`remove_due` for many rows, a transaction per minute partition and
    `TRANSACTION_LIMIT` rows. A row read by the tick is removed only as it was read: the API
    may have written it again meanwhile (a job rescheduled into the same minute), and that
    row must stay. A transaction fails whole if one row is gone or rewritten, so such a batch
    is removed row by row."""
    etags = {(row.minute, row.row_key): row.etag for row in rows}
    keyed = {key: {"PartitionKey": key[0], "RowKey": key[1]} for key in etags}
    table = store.table(TABLE)

    def unchanged(row: dict[str, object]) -> dict[str, object]:
        etag = etags[(str(row["PartitionKey"]), str(row["RowKey"]))]
        return {} if etag is None else {"etag": etag, "match_condition": IF_UNCHANGED}

    for batch in _batches(keyed):
        try:
            table.submit_transaction([("delete", row, unchanged(row)) for row in batch])
        except (TableTransactionError, ResourceNotFoundError, ResourceModifiedError):
            for row in batch:
                with suppress(ResourceNotFoundError, ResourceModifiedError):
                    table.delete_entity(row["PartitionKey"], row["RowKey"], **unchanged(row))


def _batches(rows: dict[tuple[str, str], dict[str, object]]) -> Iterator[list[dict[str, object]]]:
    """Rows keyed by (PartitionKey, RowKey) in transaction-sized batches of one partition."""
    by_partition: dict[str, list[dict[str, object]]] = {}
    for (partition, _), row in sorted(rows.items()):
        by_partition.setdefault(partition, []).append(row)
    for partition_rows in by_partition.values():
        for i in range(0, len(partition_rows), TRANSACTION_LIMIT):
            yield partition_rows[i : i + TRANSACTION_LIMIT]


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
                job_key, due, entity.get("Payload"), entity["RowKey"], entity.metadata.get("etag")
            )
