"""`POST /api/preview`: a schedule's next executions before a job goes live, plus what is
wrong with it. An invalid schedule is an answer (200 with `errors`), not a failure: the
route exists to say what is wrong; only a body that is not a preview request is a 400."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from scheduler_lib.api.docs import responses
from scheduler_lib.api.requests import json_response, read_json
from scheduler_lib.errors import ValidationError
from scheduler_lib.model import timing, wire
from scheduler_lib.preview import preview

router = APIRouter(tags=["Preview"])
MAX_COUNT = 1000

_REQUEST_SCHEMA = {
    "type": "object",
    "properties": {
        "startTime": {"type": "string", "format": "date-time"},
        "recurrence": {"$ref": "#/components/schemas/JobRecurrence"},
        "count": {"type": "integer", "minimum": 1, "maximum": MAX_COUNT, "default": 10},
        "now": {"type": "string", "format": "date-time", "description": "default: the clock"},
    },
    "example": {
        "startTime": "2026-03-04T09:00:00Z",
        "recurrence": {"frequency": "Week", "schedule": {"weekDays": ["Monday"], "hours": [9]}},
        "count": 5,
    },
}


def preview_response(body: Any, *, clock_now: datetime) -> dict[str, Any]:
    """{"executions": [...ISO UTC], "errors": [{"code", "message", "target"}]}."""
    source = wire.keys(body, "", ("startTime", "recurrence", "count", "now"))
    count = wire.integer(source.get("count", 10), "count", low=1, high=MAX_COUNT)
    now = clock_now
    if source.get("now") is not None:
        now = wire.parse_datetime(source["now"], "now")
        now = now.replace(tzinfo=UTC) if now.tzinfo is None else now.astimezone(UTC)
    job = {k: v for k, v in source.items() if k in ("startTime", "recurrence") and v is not None}
    try:
        if "recurrence" in job:
            job["recurrence"] = timing.normalize_recurrence(job["recurrence"], "recurrence")
        executions = preview(job, now=now, count=count)
    except ValidationError as exc:
        return {"executions": [], "errors": [exc.to_arm()["error"]]}
    except (OverflowError, ValueError) as exc:
        error = ValidationError("recurrence", f"cannot be evaluated ({type(exc).__name__})")
        return {"executions": [], "errors": [error.to_arm()["error"]]}
    return {"executions": [wire.iso_utc(t) for t in executions], "errors": []}


@router.post(
    "/api/preview",
    operation_id="Preview",
    summary="Preview the next executions of a startTime + recurrence",
    description=(
        "Returns up to `count` (default 10, at most 1000) executions as of `now` (default: "
        "the server clock) and the validation errors of the schedule, if any."
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
    result = await run_in_threadpool(lambda: preview_response(body, clock_now=now))
    return json_response(result)
