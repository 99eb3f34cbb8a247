"""`POST .../jobCollections/{c}/bulk` (api-version 2026-12-01): enable, disable, run now or
delete a selection of a collection's jobs (`service/bulk`), answered 200 with each job's
outcome. The use case is `service/bulk_jobs.bulk`, which the dashboard's
bulk buttons call too.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from scheduler_lib.api import paths
from scheduler_lib.api.dependencies import CollectionPath, Ctx
from scheduler_lib.api.docs import operation
from scheduler_lib.api.errors import ArmError, arm_error
from scheduler_lib.api.openapi_versions import since
from scheduler_lib.api.requests import json_response, read_json
from scheduler_lib.service.bulk import (
    MAX_JOBS,
    BulkOperation,
    BulkOutcome,
    JobResult,
    summary,
)
from scheduler_lib.service.bulk_jobs import bulk
from scheduler_lib.wire.shapes import JSONObject
from scheduler_lib.wire.versions import LATEST_VERSION, require

router = APIRouter(tags=["Jobs"])


class JobResultWire(TypedDict):
    """A job's result as the answer lists it (`_RESULT` is its schema)."""

    name: str
    outcome: str
    state: NotRequired[str]
    message: NotRequired[str]
    error: NotRequired[ArmError]


def result_to_wire(result: JobResult) -> JobResultWire:
    """A job's result: never more of the job than its name and state (no definition, so
    no secret can be in it)."""
    wire: JobResultWire = {"name": result.name, "outcome": result.outcome.value}
    if result.state is not None:
        wire["state"] = str(result.state)
    if result.message is not None:
        wire["message"] = result.message
    if result.error is not None:
        wire["error"] = arm_error(result.error)
    return wire


_RESULT: JSONObject = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "outcome": {"type": "string", "enum": [o.value for o in BulkOutcome]},
        "state": {"type": "string", "description": "The job's state afterwards"},
        "message": {"type": "string", "description": "Why it was Skipped"},
        "error": {"$ref": "#/components/schemas/ErrorResponse/properties/error"},
    },
}
_BODY: JSONObject = {
    "type": "object",
    "required": ["operation"],
    "description": "`operation` and exactly one selection: `names`, `tag` or `filter`.",
    "properties": {
        "operation": {"type": "string", "enum": [o.value for o in BulkOperation]},
        "names": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_JOBS},
        "tag": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "value": {"type": "string"}},
            "required": ["name"],
        },
        "filter": {"type": "string", "example": "state eq 'Disabled' and tagName eq 'env'"},
    },
}
_DOC = operation(
    "Jobs_Bulk", "Enable, disable, run or delete a selection of jobs (api-version 2026-12-01)",
    (200, 400, 404),
    description=f"Selects by `names` (a list of `job` or `collection/job`, as Jobs_List "
    "names them), `tag` (`{{name, value?}}`) or `filter` (the "
    f"`$filter` of Jobs_List), at most {MAX_JOBS} jobs. Answers 200 with each job's `outcome` "
    "(Succeeded, Skipped: already in that state, NotFound, Failed with its `error`) and a "
    "`summary` of the counts; each job is changed as its single-job operation changes it.",
)  # fmt: skip
_DOC["responses"][200]["content"] = {"application/json": {"schema": {
    "type": "object",
    "properties": {
        "value": {"type": "array", "items": _RESULT},
        "summary": {"type": "object", "additionalProperties": {"type": "integer"}},
    },
}}}  # fmt: skip
_EXTRA: JSONObject = {
    **since(LATEST_VERSION),
    "requestBody": {"required": True, "content": {"application/json": {"schema": _BODY}}},
}


@router.post(paths.BULK, openapi_extra=_EXTRA, **_DOC)
async def bulk_route(request: Request, ctx: Ctx, name: CollectionPath) -> Response:
    require(ctx.version, LATEST_VERSION, "a bulk operation")
    body = await read_json(request)
    results = await run_in_threadpool(bulk, ctx, name, body, ctx.clock())
    return json_response(
        {"value": [result_to_wire(r) for r in results], "summary": summary(results)}
    )
