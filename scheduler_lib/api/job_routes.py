"""Routes of the single-job operations (Jobs_Get, _CreateOrUpdate, _Patch, _Delete, _Run)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from scheduler_lib.api import job_service as service
from scheduler_lib.api import paths
from scheduler_lib.api.dependencies import Ctx, JobPath
from scheduler_lib.api.docs import body_doc, responses
from scheduler_lib.api.requests import empty_response, if_match, json_response, run_write
from scheduler_lib.model.jobs import job_to_wire

router = APIRouter(tags=["Jobs"])


@router.get(
    paths.JOB,
    operation_id="Jobs_Get",
    summary="Get a job (secrets are never returned)",
    responses=responses(200, 404, schema="JobDefinition"),
)
async def get(request: Request, ctx: Ctx, name: JobPath) -> Response:
    record = await run_in_threadpool(service.get_job, ctx, name)
    return json_response(
        job_to_wire(record, now=ctx.clock(), version=ctx.version), etag=record.etag
    )


@router.put(
    paths.JOB,
    operation_id="Jobs_CreateOrUpdate",
    summary="Create or replace a job",
    description=(
        "201 when created, 200 when replaced. The job's collection must exist; quotas are "
        "enforced with 409. A secret left out of an update keeps its stored value while the "
        "object still names the same principal (see the API module documentation)."
    ),
    responses=responses(200, 201, 400, 404, 409, 412, schema="JobDefinition"),
    openapi_extra=body_doc("JobDefinition"),
)
async def create_or_update(request: Request, ctx: Ctx, name: JobPath) -> Response:
    (record, created), now = await run_write(
        request, ctx, lambda body, etag, now: service.put_job(ctx, name, body, etag, now)
    )
    return json_response(
        job_to_wire(record, now=now, version=ctx.version), 201 if created else 200, etag=record.etag
    )


@router.patch(
    paths.JOB,
    operation_id="Jobs_Patch",
    summary="Change parts of a job (JSON merge patch of its properties)",
    responses=responses(200, 400, 404, 409, 412, schema="JobDefinition"),
    openapi_extra=body_doc("JobDefinition"),
)
async def patch(request: Request, ctx: Ctx, name: JobPath) -> Response:
    record, now = await run_write(
        request, ctx, lambda body, etag, now: service.patch_job(ctx, name, body, etag, now)
    )
    return json_response(job_to_wire(record, now=now, version=ctx.version), etag=record.etag)


@router.delete(
    paths.JOB,
    operation_id="Jobs_Delete",
    summary="Delete a job and its history",
    responses=responses(200, 404, 412),
)
async def delete(request: Request, ctx: Ctx, name: JobPath) -> Response:
    await run_in_threadpool(lambda: service.delete_job(ctx, name, client_etag=if_match(request)))
    return empty_response(200)


@router.post(
    paths.JOB + "/run",
    operation_id="Jobs_Run",
    summary="Run a job now, outside its schedule",
    description="Queues one execution and answers 200 at once; the executor runs it.",
    responses=responses(200, 404),
)
async def run(request: Request, ctx: Ctx, name: JobPath) -> Response:
    now = ctx.clock()
    record = await run_in_threadpool(lambda: service.run_job(ctx, name, now=now))
    return empty_response(200, etag=record.etag)
