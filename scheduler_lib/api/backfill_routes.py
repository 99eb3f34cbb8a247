"""`POST .../jobs/{job}/backfill` (api-version 2026-12-01 only, extension 3): run the
occurrences of a past range now, each with the execution tag its on-time run had.

Answers 202 with the occurrences queued (`dispatch/catch_up.backfill` sends them; the
executor runs them as it runs any message). Bad ranges are 400s naming `from` or `to`
(`wire/missed.backfill_range`); a job without a recurrence names `properties.recurrence`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from scheduler_lib.api import job_service as service
from scheduler_lib.api import paths
from scheduler_lib.api.context import ApiContext
from scheduler_lib.api.dependencies import Ctx, JobPath
from scheduler_lib.api.docs import operation
from scheduler_lib.api.job_service import JobName
from scheduler_lib.api.openapi_versions import since
from scheduler_lib.api.requests import json_response, read_json
from scheduler_lib.dispatch import backfill as queue_backfill
from scheduler_lib.timeutil import iso_z
from scheduler_lib.wire.missed import MAX_RUNS, backfill_range
from scheduler_lib.wire.versions import LATEST_VERSION, require

router = APIRouter(tags=["Jobs"])


@router.post(paths.JOB + "/backfill", status_code=202, openapi_extra=since(LATEST_VERSION),
             **operation(
    "Jobs_Backfill", "Run the occurrences of a past range now (api-version 2026-12-01)",
    (202, 400, 404),
    description=f'Body `{{"from": date-time, "to": date-time}}` (a past range, at most '
    f"{MAX_RUNS} occurrences, at most 60 days ago). Each occurrence runs once with the "
    "execution tag its on-time run had; its history entries are marked [Backfill].",
))  # fmt: skip
async def backfill(request: Request, ctx: Ctx, name: JobPath) -> Response:
    require(ctx.version, LATEST_VERSION, "a backfill")
    body = await read_json(request)
    queued = await run_in_threadpool(backfill_job, ctx, name, body, ctx.clock())
    return json_response({"value": queued}, 202)


def backfill_job(ctx: ApiContext, name: JobName, body: Any, now: datetime) -> list[dict[str, str]]:
    """Queue the occurrences of the job `name` in the range `body` names (`{from, to}`), as
    `[{expectedExecutionTime, executionTag}]`: the one rule for this route and the
    dashboard's Backfill form. ValidationError naming `from`/`to` (checked before the job is
    read), NotFound for no job."""
    start, end = backfill_range(body, now=now)
    record = service.get_job(ctx, name)
    sent = queue_backfill(ctx.queue, record, start, end, now=now)
    return [
        {"expectedExecutionTime": iso_z(m.occurrence), "executionTag": m.execution_tag}
        for m in sent
    ]
