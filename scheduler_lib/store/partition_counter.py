"""How many entities a partition holds, kept exact under concurrent inserts and deletes.

Used for a collection's jobs (the `maxJobCount` quota) and a job's history (the cap of
entries kept). Counting a partition and then inserting is a race: 50 parallel PUTs into a
collection allowing 10 all count fewer than 10 and all insert. So the count is an entity in
the partition itself (RowKey `COUNTER_ROW`, which no job name or history id can take: they
start with a letter or digit, and `~` sorts after them all), and every insert and delete
changes it in the same entity-group transaction (Table storage batch), conditioned on the
counter's ETag. Of racing writers exactly one wins each round; the others re-read the count
(and check the quota again).

Partitions stored before the counter existed have none: the first insert or delete that
needs it counts the partition once and creates it (create-only, so of two racing
initialisers one wins and the other re-reads). A delete in a partition without a counter
just deletes.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from typing import Any

from azure.core.exceptions import (
    ResourceExistsError,
    ResourceModifiedError,
    ResourceNotFoundError,
)
from azure.data.tables import TableClient, TableTransactionError, UpdateMode

from scheduler_lib.errors import ConflictError, NotFoundError, PreconditionFailedError
from scheduler_lib.store.etag import ContentionError, LostRace, retry_lost_races
from scheduler_lib.store.paging import query_page
from scheduler_lib.store.tables import etag_kwargs

COUNTER_ROW = "~count"
#: OData filter keeping a partition query to counted rows (the counter sorts after them).
COUNTED_ROWS = "RowKey lt '~'"


def counted_page(
    table: TableClient,
    partition: str,
    *,
    column: str,
    value: str | None,
    page_size: int,
    continuation: str | None,
) -> tuple[list[Any], str | None]:
    """One page of a counted partition's entities (those whose `column` is `value`, when
    given) and the token of the next page. The counter sorts after every counted entity, so
    only a last page can hold it; it is left out."""
    entities, token = query_page(
        table,
        partition,
        equals=(column, value) if value is not None else None,
        page_size=page_size,
        continuation=continuation,
    )
    return [entity for entity in entities if entity["RowKey"] != COUNTER_ROW], token


def _counter(table: TableClient, partition: str) -> tuple[int, str] | None:
    entity = counter_entity(table, partition)
    return None if entity is None else (int(entity.get("Count", 0)), entity.metadata["etag"])


def counter_entity(table: TableClient, partition: str) -> Any | None:
    """The counter entity as stored (None if missing)."""
    try:
        return table.get_entity(partition, COUNTER_ROW)
    except ResourceNotFoundError:
        return None


def count_rows(table: TableClient, partition: str) -> int:
    """Count a partition's counted entities by reading their keys (a partition scan)."""
    rows = table.query_entities(
        f"PartitionKey eq @pk and {COUNTED_ROWS}", parameters={"pk": partition}, select=["RowKey"]
    )
    return sum(1 for _ in rows)


def initialised_counter(table: TableClient, partition: str) -> Any:
    """The counter entity, created from one count of the partition if it is missing."""

    def attempt() -> Any:
        found = counter_entity(table, partition)
        if found is not None:
            return found
        count = count_rows(table, partition)
        with suppress(ResourceExistsError):
            table.create_entity({"PartitionKey": partition, "RowKey": COUNTER_ROW, "Count": count})
        raise LostRace  # read it back (ours, or a racing initialiser's)

    return retry_lost_races(attempt, what="The partition")


def _initialised(table: TableClient, partition: str) -> tuple[int, str]:
    entity = initialised_counter(table, partition)
    return int(entity.get("Count", 0)), entity.metadata["etag"]


def _counter_op(partition: str, count: int, etag: str) -> tuple[str, Any, dict[str, Any]]:
    entity = {"PartitionKey": partition, "RowKey": COUNTER_ROW, "Count": count}
    return ("update", entity, {"mode": UpdateMode.REPLACE, **etag_kwargs(etag)})


def create_counted(
    table: TableClient, entity: dict[str, Any], check: Callable[[int], None] | None = None
) -> tuple[dict[str, Any], int]:
    """Insert an entity and count it; `check(count)` first, with the current count (it
    raises when a quota is reached). ConflictError if it exists. Returns the insert's
    metadata and the partition's count after it."""
    partition = entity["PartitionKey"]

    def attempt() -> tuple[dict[str, Any], int]:
        count, etag = _initialised(table, partition)
        if check is not None:
            check(count)
        try:
            results = table.submit_transaction(
                [("create", entity), _counter_op(partition, count + 1, etag)]
            )
        except TableTransactionError as exc:
            if getattr(exc, "error_code", None) == "EntityAlreadyExists":
                raise ConflictError(f"'{entity['RowKey']}' already exists.") from exc
            raise LostRace from exc  # the counter changed: count again
        return dict(results[0]), count + 1

    return retry_lost_races(attempt, what="The partition")


def delete_counted(table: TableClient, partition: str, row: str, etag: str | None) -> None:
    """Delete an entity (only as read, with `etag`) and uncount it."""

    def attempt() -> None:
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
            raise LostRace from exc

    retry_lost_races(attempt, what="The partition")


def uncount(table: TableClient, partition: str, removed: int) -> None:
    """Take `removed` entities deleted outside `delete_counted` off the count (ETag loop)."""

    def attempt() -> None:
        found = _counter(table, partition)
        if found is None:
            return
        count, etag = found
        try:
            table.update_entity(
                _counter_op(partition, max(count - removed, 0), etag)[1],
                mode=UpdateMode.REPLACE,
                **etag_kwargs(etag),
            )
        except (ResourceModifiedError, ResourceNotFoundError) as exc:
            raise LostRace from exc

    # A count left high by a lost race only makes the cap trim early; the next write corrects
    # it, so giving up is better than failing the deletion that already happened.
    with suppress(ContentionError):
        retry_lost_races(attempt, what="The partition")


def _explain_failed_delete(
    table: TableClient, partition: str, row: str, etag: str | None, exc: Exception
) -> None:
    """Raise what a failed delete transaction means for the entity; return if only the
    counter changed meanwhile (the caller tries again)."""
    try:
        current = table.get_entity(partition, row)
    except ResourceNotFoundError:
        raise NotFoundError(f"'{row}' was not found.") from exc
    if etag is not None and current.metadata["etag"] != etag:
        raise PreconditionFailedError(f"'{row}' was changed by another request.") from exc
