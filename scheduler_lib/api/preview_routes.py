"""`POST /api/preview`: a schedule's next executions before a job goes live, plus what is
wrong with it. An invalid schedule is an answer (200 with `errors`, ARM error objects), not a
failure: the route exists to say what is wrong; only a body that is not a preview request is
a 400. The computation is `service/preview.preview_schedule`, shared with the dashboard."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from scheduler_lib.api.docs import responses
from scheduler_lib.api.errors import arm_error
from scheduler_lib.api.requests import json_response, read_json
from scheduler_lib.schedule import MAX_JITTER
from scheduler_lib.service.preview import MAX_COUNT, preview_schedule

router = APIRouter(tags=["Preview"])

_REQUEST_SCHEMA = {
    "type": "object",
    "properties": {
        "startTime": {"type": "string", "format": "date-time"},
        "recurrence": {"$ref": "#/components/schemas/JobRecurrence"},
        "count": {"type": "integer", "minimum": 1, "maximum": MAX_COUNT, "default": 10},
        "now": {"type": "string", "format": "date-time", "description": "default: the clock"},
        MAX_JITTER: {"type": "string", "format": "duration"},
        "id": {"type": "string", "description": f"the job's id: with {MAX_JITTER}, its offsets"},
        "properties": {
            "type": "object",
            "description": "a whole job instead of startTime and recurrence (as the CLI reads)",
        },
    },
    "example": {
        "startTime": "2026-03-04T09:00:00Z",
        "recurrence": {"frequency": "Week", "schedule": {"weekDays": ["Monday"], "hours": [9]}},
        "count": 5,
    },
}


@router.post(
    "/api/preview",
    operation_id="Preview",
    summary="Preview the next executions of a startTime + recurrence",
    description=(
        "Returns up to `count` (default 10, at most 1000) executions as of `now` (default: "
        "the server clock), the validation errors of the schedule, if any, and when fewer "
        "executions are left, why (`endReason`). The body is `{startTime, recurrence}` or a "
        "whole job (`{properties: {...}}`), as `python -m scheduler_lib preview` reads."
    ),
    responses=responses(200, 400),
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": _REQUEST_SCHEMA}},
        }
    },
)
async def preview_route(request: Request) -> Response:
    body = await read_json(request)
    now = request.app.state.context.clock()
    result = await run_in_threadpool(lambda: preview_schedule(body, clock_now=now))
    return json_response({**result, "errors": [arm_error(e) for e in result["errors"]]})
