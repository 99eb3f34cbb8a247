"""Routes of the single-job operations (Jobs_Get, _CreateOrUpdate, _Patch, _Delete, _Run)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from scheduler_lib.api import paths
from scheduler_lib.api.dependencies import Ctx, JobPath
from scheduler_lib.api.docs import operation
from scheduler_lib.api.requests import (
    JobWriteRequest,
    empty_response,
    if_match,
    json_response,
)
from scheduler_lib.service import jobs as service
from scheduler_lib.wire.jobs import job_to_wire

router = APIRouter(tags=["Jobs"])

_DEFINITION = "JobDefinition"


@router.get(
    paths.JOB,
    **operation("Jobs_Get", "Get a job (secrets are never returned)", (200, 404), _DEFINITION),
)
async def get(request: Request, ctx: Ctx, name: JobPath) -> Response:
    record = await run_in_threadpool(service.get_job, ctx, name)
    return json_response(
        job_to_wire(record, now=ctx.clock(), version=ctx.version), etag=record.etag
    )


@router.put(
    paths.JOB,
    **operation(
        "Jobs_CreateOrUpdate",
        "Create or replace a job",
        (200, 201, 400, 404, 409, 412),
        _DEFINITION,
        body=True,
        description=(
            "201 when created, 200 when replaced. The job's collection must exist; quotas are "
            "enforced with 409. A secret left out of an update keeps its stored value while the "
            "object still names the same principal (see the API module documentation)."
        ),
    ),
)
async def create_or_update(write: JobWriteRequest) -> Response:
    record, created = await run_in_threadpool(
        service.put_job, write.ctx, write.name, write.body, write.client_etag, write.now
    )
    # The one rendering step, written out here rather than a helper elsewhere: the job as
    # the request's version shows it, at the request's instant, with its ETag.
    body = job_to_wire(record, now=write.now, version=write.ctx.version)
    etag = {"ETag": record.etag} if record.etag else None
    return JSONResponse(body, status_code=201 if created else 200, headers=etag)


@router.patch(
    paths.JOB,
    **operation(
        "Jobs_Patch",
        "Change parts of a job (JSON merge patch of its properties)",
        (200, 400, 404, 409, 412),
        _DEFINITION,
        body=True,
    ),
)
async def patch(write: JobWriteRequest) -> Response:
    record = await run_in_threadpool(
        service.patch_job, write.ctx, write.name, write.body, write.client_etag, write.now
    )
    body = job_to_wire(record, now=write.now, version=write.ctx.version)
    etag = {"ETag": record.etag} if record.etag else None
    return JSONResponse(body, headers=etag)


@router.delete(
    paths.JOB, **operation("Jobs_Delete", "Delete a job and its history", (200, 404, 412))
)
async def delete(request: Request, ctx: Ctx, name: JobPath) -> Response:
    await run_in_threadpool(lambda: service.delete_job(ctx, name, client_etag=if_match(request)))
    return empty_response(200)


@router.post(
    paths.RUN,
    **operation(
        "Jobs_Run",
        "Run a job now, outside its schedule",
        (200, 404),
        description="Queues one execution and answers 200 at once; the executor runs it.",
    ),
)
async def run(request: Request, ctx: Ctx, name: JobPath) -> Response:
    now = ctx.clock()
    record = await run_in_threadpool(lambda: service.run_job(ctx, name, now=now))
    return empty_response(200, etag=record.etag)
