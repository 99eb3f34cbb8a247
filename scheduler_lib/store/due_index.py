"""The due index: which jobs have an occurrence due in which UTC minute, in which shard.

`JobDueIndex`: PartitionKey = `s<shard>-<minute>` (`s03-202603040900`: the shard, two digits,
then the UTC minute `yyyyMMddHHmm`), RowKey = the job key. A job's shard is a stable hash of
its key modulo `Settings.dispatch_shards` (`shard_of`), so no one partition carries a whole
minute (Azure Table's target is ~2,000 entities/s per partition) and each shard is dispatched
on its own. The shard comes first so that one shard's minutes are one PartitionKey range: a
dispatch worker reads its shard from its cursor to one minute ahead in one range scan, so its
cost follows what is due, not how many jobs exist. A row is only a hint: the job entity's
`nextExecutionTime` decides, so a stale row (job deleted, rescheduled or disabled) is
harmless and is dropped by the dispatcher. Rows in the format before sharding (PartitionKey =
the minute alone) are moved by `due_index_migration`.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import islice
from typing import Any, TypeVar

from azure.core.exceptions import ResourceModifiedError, ResourceNotFoundError
from azure.data.tables import TableTransactionError, UpdateMode

from scheduler_lib.store.tables import PAGE_LIMIT, TableStore, as_datetime, etag_kwargs

TABLE = "JobDueIndex"
MINUTE_FORMAT = "%Y%m%d%H%M"
#: Every sharded PartitionKey starts with this; one before sharding starts with a digit.
SHARD_PREFIX = "s"


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
    #: The PartitionKey it was read from: its shard and the minute of `due`, except for a row
    #: re-indexed by `reindex_overdue` into a minute the dispatcher still reads. None: the
    #: row a job's key and `due` name (`partition_of` computes it).
    partition: str | None = None

    @property
    def minute(self) -> str:
        if self.partition is None:
            return minute_key(self.due)
        return self.partition.rsplit("-", 1)[-1]


def minute_key(instant: datetime) -> str:
    """The PartitionKey of the minute containing `instant` (UTC)."""
    return instant.astimezone(UTC).strftime(MINUTE_FORMAT)


def shard_of(job_key: str, shards: int) -> int:
    """The shard of a job: a hash that is the same in every process and release (crc32 of
    the job key; Python's `hash` is salted per process). A parked message's row key (job key,
    then `|tag`) falls in its job's shard."""
    return zlib.crc32("|".join(job_key.split("|")[:4]).encode()) % shards


def partition_key(shard: int, minute: str) -> str:
    """The PartitionKey of one shard's minute."""
    return f"{SHARD_PREFIX}{shard:02d}-{minute}"


def _partition(store: TableStore, job_key: str, minute: str) -> str:
    return partition_key(shard_of(job_key, store.settings.dispatch_shards), minute)


def partition_of(store: TableStore, row: DueRow) -> str:
    """The PartitionKey a row lives in: as read, or as its job key and minute say."""
    return row.partition or _partition(store, row.job_key, row.minute)


#: Entities one table transaction may hold (all in one partition).
TRANSACTION_LIMIT = 100
T = TypeVar("T")


def _occurrence_row(store: TableStore, job_key: str, due: datetime) -> dict[str, object]:
    return {
        "PartitionKey": _partition(store, job_key, minute_key(due)),
        "RowKey": job_key,
        "Due": due.astimezone(UTC),
    }


def add_due(
    store: TableStore, job_key: str, due: datetime, *, incarnation: str = "", at: str | None = None
) -> DueRow:
    """Record that `job_key` has an occurrence at `due` (idempotent). `incarnation` marks the
    row as the API wrote it for that incarnation of the job (see `remove_incarnation_row`);
    `at` files it under another minute than `due`'s (see `reindex_overdue`)."""
    row = _occurrence_row(store, job_key, due)
    if incarnation:
        row["Incarnation"] = incarnation
    if at is not None:
        row["PartitionKey"] = _partition(store, job_key, at)
    store.table(TABLE).upsert_entity(row, mode=UpdateMode.REPLACE)
    return DueRow(job_key, due, row_key=job_key, partition=str(row["PartitionKey"]))


def has_due_row(store: TableStore, job_key: str, due: datetime) -> bool:
    """Whether the row of `job_key`'s occurrence at `due` exists (one point read)."""
    try:
        store.table(TABLE).get_entity(
            _partition(store, job_key, minute_key(due)), job_key, select=["RowKey"]
        )
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
    partition = _partition(store, job_key, minute_key(due))
    try:
        entity = store.table(TABLE).get_entity(partition, job_key)
    except ResourceNotFoundError:
        return False
    if entity.get("Incarnation") != incarnation:
        return False
    with suppress(ResourceNotFoundError, ResourceModifiedError):
        store.table(TABLE).delete_entity(
            partition, job_key, **etag_kwargs(entity.metadata.get("etag"))
        )
        return True
    return False


def add_due_rows(store: TableStore, occurrences: Iterable[tuple[str, datetime]]) -> None:
    """`add_due` for many (job key, due) pairs: one transaction per minute partition and
    `TRANSACTION_LIMIT` rows instead of a round trip each (a tick moves hundreds of jobs
    whose next occurrences often share a minute: every day at 09:00)."""
    rows = {}
    for key, due in occurrences:
        row = _occurrence_row(store, key, due)
        rows[(str(row["PartitionKey"]), key)] = row
    for batch in _batches(rows):
        store.table(TABLE).submit_transaction(
            [("upsert", row, {"mode": UpdateMode.REPLACE}) for row in batch]
        )


def park_message(store: TableStore, job_key: str, tag: str, payload: str, due: datetime) -> DueRow:
    """Park an execution message until `due` (idempotent per job and tag)."""
    row_key = f"{job_key}|{tag}"
    store.table(TABLE).upsert_entity(
        {
            "PartitionKey": _partition(store, job_key, minute_key(due)),
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
        store.table(TABLE).delete_entity(
            _partition(store, row_key, minute_key(due)), row_key, **etag_kwargs(etag)
        )


def remove_due_rows(store: TableStore, rows: Iterable[DueRow]) -> None:
    """`remove_due` (with each row's ETag as read) for many rows, a transaction per minute
    partition and `TRANSACTION_LIMIT` rows. A transaction fails whole if one row is gone or
    rewritten, so such a batch is removed row by row."""
    table = store.table(TABLE)
    keyed = {(partition_of(store, row), row.row_key): row for row in rows}
    for batch in _batches({key: key for key in keyed}):
        operations = [
            ("delete", {"PartitionKey": pk, "RowKey": rk}, etag_kwargs(keyed[pk, rk].etag))
            for pk, rk in batch
        ]
        try:
            table.submit_transaction(operations)
        except (TableTransactionError, ResourceNotFoundError, ResourceModifiedError):
            for pk, rk in batch:
                with suppress(ResourceNotFoundError, ResourceModifiedError):
                    table.delete_entity(pk, rk, **etag_kwargs(keyed[pk, rk].etag))


def _batches(items: dict[tuple[str, str], T]) -> Iterator[list[T]]:
    """Items keyed by (PartitionKey, RowKey) in transaction-sized batches of one partition."""
    by_partition: dict[str, list[T]] = {}
    for (partition, _), item in sorted(items.items(), key=lambda pair: pair[0]):
        by_partition.setdefault(partition, []).append(item)
    for partition_items in by_partition.values():
        for i in range(0, len(partition_items), TRANSACTION_LIMIT):
            yield partition_items[i : i + TRANSACTION_LIMIT]


def count_rows(
    store: TableStore, *, start: datetime, through: datetime, shard: int, up_to: int
) -> int:
    """How many rows one shard has in the minutes `due_rows` would read, counted up to
    `up_to`: the same range scan asking for the keys only, a page at a time, so a shard with
    up to a page of rows (or none) costs one request, and counting stops at `up_to`."""
    entities = _range_scan(
        store, start, through, shard, select=["PartitionKey"],
        results_per_page=max(1, min(up_to, PAGE_LIMIT)),
    )  # fmt: skip
    return sum(1 for _ in islice(entities, up_to))


def _range_scan(
    store: TableStore, start: datetime, through: datetime, shard: int, **options: Any
) -> Iterable[Any]:
    """One shard's rows from the minute containing `start` through the one containing
    `through` (one PartitionKey range scan; `options` go to the query)."""
    return store.table(TABLE).query_entities(
        "PartitionKey ge @lo and PartitionKey le @hi",
        parameters={
            "lo": partition_key(shard, minute_key(start)),
            "hi": partition_key(shard, minute_key(through)),
        },
        **options,
    )


def due_rows(
    store: TableStore, *, start: datetime, through: datetime, shard: int | None = None
) -> Iterator[DueRow]:
    """Rows of the minutes from the one containing `start` through the one containing
    `through`: of one `shard`, oldest minute first (one PartitionKey range scan), or of every
    shard (one scan each, then sorted by minute)."""
    if shard is None:
        every = range(store.settings.dispatch_shards)
        rows = [r for s in every for r in due_rows(store, start=start, through=through, shard=s)]
        yield from sorted(rows, key=lambda r: (r.minute, r.row_key))
        return
    for entity in _range_scan(store, start, through, shard):
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
