"""`POST .../jobCollections/{c}/bulk` (api-version 2026-12-01): enable, disable, run now or
delete a selection of a collection's jobs (`service/bulk`), answered 200 with each job's
outcome. `CollectionJobs` hands the single-job services to the use case, for this route and
the dashboard's bulk buttons alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from scheduler_lib.api import collection_service, job_service, paths
from scheduler_lib.api.collection_service import CollectionName
from scheduler_lib.api.context import ApiContext
from scheduler_lib.api.dependencies import CollectionPath, Ctx
from scheduler_lib.api.docs import operation
from scheduler_lib.api.errors import arm_error
from scheduler_lib.api.job_service import JobName
from scheduler_lib.api.openapi_versions import since
from scheduler_lib.api.requests import json_response, read_json
from scheduler_lib.domain import JobRecord, JobState
from scheduler_lib.service.bulk import (
    MAX_JOBS,
    BulkOperation,
    BulkOutcome,
    JobResult,
    read_request,
    run_bulk,
    summary,
)
from scheduler_lib.wire.versions import LATEST_VERSION, require

router = APIRouter(tags=["Jobs"])


@dataclass(frozen=True)
class CollectionJobs:
    """The API's single-job services on the jobs of `collection`, at the instant `now`."""

    ctx: ApiContext
    collection: CollectionName
    now: datetime

    def _name(self, job: str) -> JobName:
        c = self.collection
        return JobName(c.subscription_id, c.resource_group, c.collection, job)

    def check(self) -> None:
        collection_service.get_collection(self.ctx, self.collection)

    def every(self) -> list[JobRecord]:
        record = collection_service.get_collection(self.ctx, self.collection)
        return collection_service.all_jobs(self.ctx, record)

    def read(self, name: str) -> JobRecord:
        return job_service.get_job(self.ctx, self._name(name))

    def set_state(self, name: str, state: JobState) -> JobRecord:
        body = {"properties": {"state": state.value}}
        return job_service.patch_job(self.ctx, self._name(name), body, None, self.now)

    def run(self, name: str) -> JobRecord:
        return job_service.run_job(self.ctx, self._name(name), now=self.now)

    def delete(self, name: str) -> None:
        job_service.delete_job(self.ctx, self._name(name), client_etag=None)


def bulk(ctx: ApiContext, name: CollectionName, body: Any, now: datetime) -> list[JobResult]:
    """The one entry of the route and the dashboard: the body read (400s naming the field)
    before the collection is (404), then each job."""
    request = read_request(body)
    return run_bulk(CollectionJobs(ctx, name, now), request)


def result_to_wire(result: JobResult) -> dict[str, Any]:
    """A job's result: never more of the job than its name and state (no definition, so
    no secret can be in it)."""
    wire: dict[str, Any] = {"name": result.name, "outcome": result.outcome.value}
    if result.state is not None:
        wire["state"] = str(result.state)
    if result.message is not None:
        wire["message"] = result.message
    if result.error is not None:
        wire["error"] = arm_error(result.error)
    return wire


_RESULT = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "outcome": {"type": "string", "enum": [o.value for o in BulkOutcome]},
        "state": {"type": "string", "description": "The job's state afterwards"},
        "message": {"type": "string", "description": "Why it was Skipped"},
        "error": {"$ref": "#/components/schemas/ErrorResponse/properties/error"},
    },
}
_BODY = {
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
    description=f"Selects by `names` (a list), `tag` (`{{name, value?}}`) or `filter` (the "
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
_EXTRA = {
    **since(LATEST_VERSION),
    "requestBody": {"required": True, "content": {"application/json": {"schema": _BODY}}},
}


@router.post(paths.COLLECTION + "/bulk", openapi_extra=_EXTRA, **_DOC)
async def bulk_route(request: Request, ctx: Ctx, name: CollectionPath) -> Response:
    require(ctx.version, LATEST_VERSION, "a bulk operation")
    body = await read_json(request)
    results = await run_in_threadpool(bulk, ctx, name, body, ctx.clock())
    return json_response(
        {"value": [result_to_wire(r) for r in results], "summary": summary(results)}
    )
