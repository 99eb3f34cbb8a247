"""`POST .../jobs/{job}/backfill` (api-version 2026-12-01 only, extension 3): run the
occurrences of a past range now, each with the execution tag its on-time run had.

Answers 202 with the occurrences queued; the use case is `service/backfill.backfill_job`
(shared with the dashboard's Backfill form), this route only reads and answers HTTP.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from scheduler_lib.api import paths
from scheduler_lib.api.dependencies import Ctx, JobPath
from scheduler_lib.api.docs import operation
from scheduler_lib.api.openapi_versions import since
from scheduler_lib.api.requests import json_response, read_json
from scheduler_lib.service.backfill import backfill_job
from scheduler_lib.wire.missed import MAX_RUNS
from scheduler_lib.wire.versions import LATEST_VERSION, require

router = APIRouter(tags=["Jobs"])


@router.post(paths.BACKFILL, status_code=202, openapi_extra=since(LATEST_VERSION),
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
