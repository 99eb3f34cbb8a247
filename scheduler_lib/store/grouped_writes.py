"""Replaces of one partition at the same moment as one entity-group transaction.

The storage side of `group_commit`: a worker whose `TableStore` was built with
`group_writes=True` (the runtime's, which the executor and the dispatcher write jobs
through; never the API's) sends the ETag-conditional replaces (and upserts) of `put_job`
here. A write alone is `tables.write_entity`'s one request, as before; writes to one
partition that wait behind one in flight go out together as one `submit_transaction`.

Each caller sees what its lone write would: its new ETag, or the exception the SDK raises
for that write alone. A transaction is all or nothing, and Table storage names the failing
operation (`TableTransactionError.index`): that write gets the error its lone request
would have raised (412 -> `ResourceModifiedError`, which `storage_errors` turns into
`PreconditionFailedError`; 404 -> `ResourceNotFoundError`; 409 -> `ResourceExistsError`),
and the others, not applied, go in the next round. A failure that names no single write
(any other status, or a transaction found too large) is settled by sending that write alone,
so its caller gets exactly the lone write's outcome. A write conditional on an ETag that a
write sent here already replaced gets its 412 without a request (`group_commit`). No answer
at all (a connection reset, a timeout) reaches every caller of the transaction, as it would
each lone write.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from typing import Any

from azure.core.exceptions import (
    HttpResponseError,
    ResourceExistsError,
    ResourceModifiedError,
    ResourceNotFoundError,
)
from azure.data.tables import TableClient, TableTransactionError, UpdateMode

from scheduler_lib.group_commit import AGAIN, MAX_OPERATIONS, MAX_WEIGHT, GroupCommit, Outcome
from scheduler_lib.store.tables import etag_kwargs, write_entity

#: One write: the entity and the ETag it is conditional on (None: an upsert).
Write = tuple[dict[str, Any], str | None]
Meta = dict[str, Any]
JobWrites = GroupCommit[Write, Meta]

#: The exception a lone write raises for the status a transaction reports for it.
_LONE_ERRORS: dict[int, type[HttpResponseError]] = {
    412: ResourceModifiedError,
    404: ResourceNotFoundError,
    409: ResourceExistsError,
}
#: Estimated bytes of one operation beyond its entity's JSON (its part's headers).
_PART_OVERHEAD = 512


def write_grouped(
    writes: JobWrites,
    table: TableClient,
    entity: dict[str, Any],
    *,
    etag: str | None,
) -> Meta:
    """`write_entity`'s metadata (the new ETag) or error for this replace (conditional on
    `etag`) or upsert (`etag` None); in a transaction with the other writes of `entity`'s
    partition waiting at the same moment (see the module)."""

    def send_one(write: Write) -> Meta:
        return write_entity(table, write[0], etag=write[1], create_only=False)

    return writes.write(
        (table.table_name, entity["PartitionKey"]),
        entity["RowKey"],
        (entity, etag),
        send_one=send_one,
        send_group=partial(_transaction, table, send_one),
        weight=len(json.dumps(entity, default=str)) + _PART_OVERHEAD,
        condition=etag,
        superseded=_superseded,
    )


def write_together(table: TableClient, writes: list[Write]) -> list[Meta | BaseException]:
    """Each write's metadata or error, the writes (of one partition, one per row) sent in
    as few transactions as they fit (`group_commit`'s limits): what `write_grouped` would
    give each had they all waited behind one in flight, for a caller that holds them all at
    once (the dispatcher's chunk, `dispatch.chunk`). A round that fails at one write settles
    that one and sends the others again; no answer at all is every write's error."""

    def send_one(write: Write) -> Meta:
        return write_entity(table, write[0], etag=write[1], create_only=False)

    outcomes: list[Outcome[Meta]] = [AGAIN] * len(writes)
    weights = [len(json.dumps(w[0], default=str)) + _PART_OVERHEAD for w in writes]
    pending = list(range(len(writes)))
    while pending:
        batch, weight = [pending[0]], weights[pending[0]]
        for index in pending[1:MAX_OPERATIONS]:
            if weight + weights[index] > MAX_WEIGHT:
                break
            batch.append(index)
            weight += weights[index]
        try:
            answers = _transaction(table, send_one, [writes[i] for i in batch])
        except Exception as exc:  # no answer: none of them is known to be written
            answers = [exc] * len(batch)
        for index, answer in zip(batch, answers, strict=True):
            outcomes[index] = answer
        pending = [i for i in pending if outcomes[i] is AGAIN]
    return [o for o in outcomes if isinstance(o, (dict, BaseException))]  # none is AGAIN now


def _superseded(write: Write) -> Exception:
    """The 412 a write conditional on an ETag already replaced would get (`group_commit`):
    what a lone write raises for it, without the request."""
    error = ResourceModifiedError(
        message="The update condition specified in the request was not satisfied: "
        f"the entity was replaced since ETag {write[1]}.\nErrorCode:UpdateConditionNotSatisfied"
    )
    error.error_code = "UpdateConditionNotSatisfied"  # type: ignore[attr-defined]  # as the SDK's
    return error


def _operation(write: Write) -> tuple[str, dict[str, Any], dict[str, Any]]:
    entity, etag = write
    if etag is None:
        return ("upsert", entity, {"mode": UpdateMode.REPLACE})
    return ("update", entity, {"mode": UpdateMode.REPLACE, **etag_kwargs(etag)})


def _transaction(
    table: TableClient, send_one: Callable[[Write], Meta], writes: list[Write]
) -> list[Outcome[Meta]]:
    try:
        return [dict(m) for m in table.submit_transaction([_operation(w) for w in writes])]
    except TableTransactionError as exc:
        failed = exc.index if 0 <= exc.index < len(writes) else 0
        outcomes: list[Outcome[Meta]] = [AGAIN] * len(writes)
        lone = _LONE_ERRORS.get(exc.status_code or 0)
        if lone is not None and exc.status_code != 413:
            error = lone(message=exc.message, response=exc.response)
            error.error_code = exc.error_code  # type: ignore[attr-defined]  # as the SDK's
            outcomes[failed] = error
        else:  # not a condition of that write: its lone request says what it is
            outcomes[failed] = _alone(send_one, writes[failed])
        return outcomes


def _alone(send_one: Callable[[Write], Meta], write: Write) -> Outcome[Meta]:
    try:
        return send_one(write)
    except Exception as exc:  # this write's own outcome, whatever it is
        return exc
