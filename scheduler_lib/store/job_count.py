"""A collection's job count, kept exact under concurrent creates and deletes.

Counting a collection's jobs and then inserting one is a race: 50 parallel PUTs into a
collection allowing 10 all count fewer than 10 and all insert. So the count is an entity in
the collection's own partition of `Jobs` (RowKey `COUNTER_ROW`, which no job name can take:
names start with a letter or digit, and `~` sorts after them all), and every create and
delete of a job changes it in the same entity-group transaction (Table storage batch) as the
job itself, conditioned on the counter's ETag. Of racing writers exactly one wins each
round; the others re-read the count and check the quota again.

Collections stored before the counter existed have none: the first create or delete that
needs it counts the jobs once and creates it (create-only, so of two racing initialisers one
wins and the other re-reads). A delete in a partition without a counter just deletes.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from azure.core.exceptions import ResourceExistsError, ResourceNotFoundError
from azure.data.tables import TableClient, TableTransactionError, UpdateMode

from scheduler_lib.errors import ConflictError, NotFoundError, PreconditionFailedError
from scheduler_lib.store.tables import etag_kwargs

COUNTER_ROW = "~count"
#: OData filter keeping a partition query to job rows (the counter sorts after every name).
JOB_ROWS = "RowKey lt '~'"
#: Rounds a writer may lose to others changing the counter before it gives up (each round
#: one writer wins, so this bounds the parallel creates one collection absorbs at once).
_MAX_ROUNDS = 200


def _counter(table: TableClient, partition: str) -> tuple[int, str] | None:
    try:
        entity = table.get_entity(partition, COUNTER_ROW)
    except ResourceNotFoundError:
        return None
    return int(entity.get("Count", 0)), entity.metadata["etag"]


def _initialised(table: TableClient, partition: str) -> tuple[int, str]:
    """The counter, created from one count of the partition's jobs if it is missing."""
    while True:
        found = _counter(table, partition)
        if found is not None:
            return found
        rows = table.query_entities(
            f"PartitionKey eq @pk and {JOB_ROWS}", parameters={"pk": partition}, select=["RowKey"]
        )
        count = sum(1 for _ in rows)
        try:
            meta = table.create_entity(
                {"PartitionKey": partition, "RowKey": COUNTER_ROW, "Count": count}
            )
        except ResourceExistsError:
            continue
        return count, meta["etag"]


def _counter_op(partition: str, count: int, etag: str) -> tuple[str, Any, dict[str, Any]]:
    entity = {"PartitionKey": partition, "RowKey": COUNTER_ROW, "Count": count}
    return ("update", entity, {"mode": UpdateMode.REPLACE, **etag_kwargs(etag)})


def _back_off(round_: int) -> None:
    time.sleep(random.uniform(0, min(0.05, 0.002 * 2 ** min(round_, 5))))


def create_counted(
    table: TableClient, entity: dict[str, Any], check: Callable[[int], None] | None
) -> dict[str, Any]:
    """Insert a job entity and count it; `check(count)` first, with the current count (it
    raises when the quota is reached). ConflictError if the job exists."""
    partition = entity["PartitionKey"]
    for round_ in range(_MAX_ROUNDS):
        count, etag = _initialised(table, partition)
        if check is not None:
            check(count)
        try:
            results = table.submit_transaction(
                [("create", entity), _counter_op(partition, count + 1, etag)]
            )
        except TableTransactionError as exc:
            if exc.error_code == "EntityAlreadyExists":
                raise ConflictError(f"Job '{entity['Name']}' already exists.") from exc
            _back_off(round_)  # the counter changed: count again
            continue
        return results[0]
    raise ConflictError("The job collection is being changed by other requests; retry.")


def delete_counted(table: TableClient, partition: str, row: str, etag: str | None) -> None:
    """Delete a job entity (only as read, with `etag`) and uncount it."""
    for round_ in range(_MAX_ROUNDS):
        found = _counter(table, partition)
        if found is None:
            table.delete_entity(partition, row, **etag_kwargs(etag))
            return
        count, counter_etag = found
        job_op = ("delete", {"PartitionKey": partition, "RowKey": row}, etag_kwargs(etag))
        try:
            table.submit_transaction(
                [job_op, _counter_op(partition, max(count - 1, 0), counter_etag)]
            )
        except TableTransactionError as exc:
            _explain_failed_delete(table, partition, row, etag, exc)
            _back_off(round_)
            continue
        return
    raise ConflictError("The job collection is being changed by other requests; retry.")


def _explain_failed_delete(
    table: TableClient, partition: str, row: str, etag: str | None, exc: Exception
) -> None:
    """Raise what a failed delete transaction means for the job; return if only the counter
    changed meanwhile (the caller tries again)."""
    try:
        current = table.get_entity(partition, row)
    except ResourceNotFoundError:
        raise NotFoundError(f"Job '{row}' was not found.") from exc
    if etag is not None and current.metadata["etag"] != etag:
        raise PreconditionFailedError(f"Job '{row}' was changed by another request.") from exc
