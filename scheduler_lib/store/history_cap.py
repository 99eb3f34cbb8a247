"""A job's history never holds more than `keep` entries, enforced as each entry is written.

Housekeeping alone trimmed once a day, and an every-minute job with retries stored 20,000
entries in two weeks. Trimming by reading the partition on every write would cost a scan per
write, so each history partition keeps its count (`partition_counter`) and, with it, the ids
of its oldest `REMEMBERED` entries (`Oldest`, oldest last). A write into a full partition
inserts the new entry, deletes the oldest remembered one and updates the counter in one
entity-group transaction, conditioned on the counter's ETag: the partition stays at exactly
`keep`, at the price of one point read and one transaction per write. Only when the
remembered ids run out (every `REMEMBERED` writes), the count is over `keep` (history stored
before the cap) or a remembered entry is gone (housekeeping pruned it) does a write read the
partition's keys, delete what lies beyond the newest `keep - 1` and remember afresh.

The executor keeps what its last write left the counter at in the job entity, which it reads
and writes around each attempt anyway (`domain/history_counter.py`): `insert_known` writes with
that snapshot in the transaction alone, no read, and falls back to `insert_capped` when the
transaction fails (the counter changed meanwhile: the ETag no longer matches; or a counter
appeared where the snapshot knew none). Either returns the counter as the write left it, for
the next snapshot.
"""

from __future__ import annotations

import json
from contextlib import suppress
from typing import Any

from azure.core.exceptions import (
    ResourceModifiedError,
    ResourceNotFoundError,
    ServiceRequestError,
    ServiceResponseError,
)
from azure.data.tables import TableClient, TableTransactionError, UpdateMode

from scheduler_lib.domain.history_counter import HistoryCounter
from scheduler_lib.store.etag import ContentionError, LostRace, retry_lost_races
from scheduler_lib.store.partition_counter import (
    COUNTED_ROWS,
    COUNTER_ROW,
    count_rows,
    counter_entity,
    initialised_counter,
)
from scheduler_lib.store.tables import etag_kwargs

#: Ids of a full partition's oldest entries the counter remembers (~26 characters each).
REMEMBERED = 100
OLDEST = "Oldest"
_BATCH = 100


def insert_known(
    table: TableClient, entity: dict[str, Any], *, keep: int, known: HistoryCounter | None
) -> HistoryCounter | None:
    """Insert a history entity as `insert_capped` does, with the counter as `known` (no read
    of it, when it is still so); returns the counter as written (None: not known)."""
    if known is not None:
        try:
            written = _known_write(table, entity, keep, known)
        except (ServiceRequestError, ServiceResponseError):
            # No answer (a connection dropped): the SDK does not send a POST again, and the
            # transaction may have been applied. Where the counter's read went first, a stale
            # pooled connection failed on it, which the SDK retries; here a point read of
            # the entry (retried too) tells whether it is written, so the attempt is neither
            # lost nor, redelivered, run again for want of its entry.
            if _stored(table, entity):
                return None  # written, the counter with it; as what, not known
            written = None
        if written is not None:
            return written
    return insert_capped(table, entity, keep=keep)


def _stored(table: TableClient, entity: dict[str, Any]) -> bool:
    try:
        table.get_entity(entity["PartitionKey"], entity["RowKey"], select=["RowKey"])
    except ResourceNotFoundError:
        return False
    return True


def _known_write(
    table: TableClient, entity: dict[str, Any], keep: int, known: HistoryCounter
) -> HistoryCounter | None:
    """The transaction of a write with the counter as `known`, or None when it failed (the
    counter is not as known; nothing was written) or needs the partition read (trimming)."""
    partition = entity["PartitionKey"]
    if known.etag is None:  # no counter, no entry: create the counter with the entry
        counter = {"PartitionKey": partition, "RowKey": COUNTER_ROW, "Count": 1}
        operations: list[tuple[str, Any, dict[str, Any]]] = [
            ("create", entity, {}),
            ("create", counter, {}),
        ]
        count, oldest = 1, []
    else:
        count, oldest = known.count, list(known.oldest)
        if count > keep or (count == keep and not oldest):
            return None
        operations = _capped_operations(entity, count, oldest, known.etag, keep)
        count = min(count + 1, keep)
    try:
        results = table.submit_transaction(operations)
    except TableTransactionError:
        return None
    return _written(count, oldest, results)


def _capped_operations(
    entity: dict[str, Any], count: int, oldest: list[str], etag: str, keep: int
) -> list[tuple[str, Any, dict[str, Any]]]:
    """Insert `entity`, delete the oldest remembered entry if the partition is full (popped
    off `oldest`), and store the new count and `oldest` if the counter still has `etag`."""
    partition = entity["PartitionKey"]
    operations: list[tuple[str, Any, dict[str, Any]]] = [("create", entity, {})]
    if count == keep:
        operations.append(("delete", {"PartitionKey": partition, "RowKey": oldest.pop()}, {}))
    else:
        count += 1
    operations.append(_counter_update(partition, count, oldest, etag))
    return operations


def _written(count: int, oldest: list[str], results: Any) -> HistoryCounter | None:
    """The counter as a transaction left it: its operation is the last, with its new ETag
    (None if the answer had none: a snapshot without an ETag would mean 'no counter')."""
    etag = results[-1].get("etag") if results else None
    return HistoryCounter(count, tuple(oldest), etag) if etag else None


def insert_capped(
    table: TableClient, entity: dict[str, Any], *, keep: int
) -> HistoryCounter | None:
    """Insert a history entity, keeping its partition at no more than `keep` entries;
    returns the counter as written (None: not known)."""
    partition = entity["PartitionKey"]

    def attempt() -> HistoryCounter | None:
        counter = counter_entity(table, partition)
        if counter is None:
            return _first_write(table, entity, keep)
        count, etag = int(counter.get("Count", 0)), counter.metadata["etag"]
        oldest: list[str] = json.loads(counter.get(OLDEST) or "[]")
        if count > keep or (count == keep and not oldest):
            _forget_beyond(table, partition, keep - 1, etag)
            raise LostRace
        operations = _capped_operations(entity, count, oldest, etag, keep)
        try:
            results = table.submit_transaction(operations)
        except TableTransactionError as exc:
            # ResourceNotFound: a remembered entry was deleted meanwhile.
            if getattr(exc, "error_code", None) == "ResourceNotFound":
                _forget_beyond(table, partition, keep - 1, etag)
            raise LostRace from exc
        return _written(min(count + 1, keep), oldest, results)

    try:
        return retry_lost_races(attempt, what="The history")
    except ContentionError:
        # The counter kept changing: never lose the entry itself; the next write trims.
        table.create_entity(entity)
        return None


def _first_write(table: TableClient, entity: dict[str, Any], keep: int) -> HistoryCounter | None:
    """A partition without a counter (a job's first entry, or history stored before the cap):
    count it once, then insert the entry and create the counter in one transaction. A racing
    writer that created the counter first fails it whole (create-only), so the caller reads
    the counter and writes again; a partition already full is trimmed by that second try.
    This costs a job's first entry three requests, where initialising the counter first
    (`initialised_counter`: create, then read it back) and then writing cost five."""
    partition = entity["PartitionKey"]
    count = count_rows(table, partition)
    if count + 1 > keep:
        initialised_counter(table, partition)
        raise LostRace
    counter = {"PartitionKey": partition, "RowKey": COUNTER_ROW, "Count": count + 1}
    try:
        results = table.submit_transaction([("create", entity), ("create", counter)])
    except TableTransactionError as exc:
        raise LostRace from exc
    return _written(count + 1, [], results)


def _counter_update(
    partition: str, count: int, oldest: list[str], etag: str
) -> tuple[str, Any, dict[str, Any]]:
    entity = {
        "PartitionKey": partition,
        "RowKey": COUNTER_ROW,
        "Count": count,
        OLDEST: json.dumps(oldest, separators=(",", ":")),
    }
    return ("update", entity, {"mode": UpdateMode.REPLACE, **etag_kwargs(etag)})


def _forget_beyond(table: TableClient, partition: str, room: int, etag: str) -> None:
    """Delete every entry beyond the newest `room`, and store the count and the oldest kept
    ids (ETag-conditional: a writer that raced it makes the caller read and decide again).

    The deletes go in the counter's transaction when they fit in one (a full partition sheds
    one entry): deleting what a read showed after a racing writer has inserted and counted
    its entry (the counter no longer has `etag`) would take entries off without uncounting
    them. Only history stored before the cap has more to delete; that goes in batches first."""
    rows = [
        entity["RowKey"]
        for entity in table.query_entities(
            f"PartitionKey eq @pk and {COUNTED_ROWS}",
            parameters={"pk": partition},
            select=["RowKey"],
        )
    ]  # newest first
    kept, doomed = rows[:room], rows[room:]
    operation = _counter_update(partition, len(kept), kept[-REMEMBERED:], etag)
    if len(doomed) < _BATCH:
        deletes: list[tuple[str, Any, dict[str, Any]]] = [
            ("delete", {"PartitionKey": partition, "RowKey": r}, {}) for r in doomed
        ]
        with suppress(TableTransactionError):  # the counter (or a row) changed meanwhile
            table.submit_transaction([*deletes, operation])
        return
    delete_rows(table, partition, doomed)
    with suppress(ResourceModifiedError, ResourceNotFoundError):
        table.update_entity(operation[1], mode=UpdateMode.REPLACE, **etag_kwargs(etag))


def delete_rows(table: TableClient, partition: str, rows: list[str]) -> int:
    """Delete entries of one partition by id, a transaction per `_BATCH`; returns how many."""
    for i in range(0, len(rows), _BATCH):
        batch = [("delete", {"PartitionKey": partition, "RowKey": r}) for r in rows[i : i + _BATCH]]
        try:
            table.submit_transaction(batch)
        except TableTransactionError:
            # A row deleted meanwhile fails the whole batch; fall back to one by one.
            for _, entity in batch:
                table.delete_entity(partition, entity["RowKey"])
    return len(rows)
