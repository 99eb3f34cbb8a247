"""Routes of the paged lists: a collection's jobs (Jobs_List) and a job's history."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from starlette.concurrency import run_in_threadpool

from scheduler_lib.api import collection_service, job_service, paths
from scheduler_lib.api.dependencies import CollectionPath, Ctx, JobPath
from scheduler_lib.api.docs import responses
from scheduler_lib.api.odata import parse_options
from scheduler_lib.api.paging import next_link, page_body, read_page
from scheduler_lib.api.requests import json_response
from scheduler_lib.domain import HISTORY_STATUSES, JOB_STATES, JobRecord
from scheduler_lib.model import arm
from scheduler_lib.model.jobs import job_to_wire
from scheduler_lib.store import HistoryEntry, list_history
from scheduler_lib.store import jobs as job_store

router = APIRouter(tags=["Jobs"])

TOP = Annotated[str | None, Query(alias="$top", description="page size, 1..100 (default 100)")]
SKIP = Annotated[str | None, Query(alias="$skip", description="rows to skip first")]
FILTER = Annotated[str | None, Query(alias="$filter", description="e.g. state eq 'Enabled'")]
SKIPTOKEN = Annotated[str | None, Query(alias="$skiptoken", description="from nextLink")]


@router.get(
    paths.JOBS,
    operation_id="Jobs_List",
    summary="List the jobs of a job collection",
    description="`$filter`: `state eq 'Enabled'` (quoted or not, any case).",
    responses=responses(200, 404, schema="JobListResult"),
)
async def list_jobs(
    request: Request,
    ctx: Ctx,
    name: CollectionPath,
    top: TOP = None,
    skip: SKIP = None,
    filter_text: FILTER = None,
    skiptoken: SKIPTOKEN = None,
) -> Response:
    options = parse_options(top, skip, filter_text, field="state", values=JOB_STATES)

    def work() -> tuple[list[JobRecord], str | None]:
        collection_service.get_collection(ctx, name)  # 404 for a missing collection

        def fetch(size: int, token: str | None) -> tuple[list[JobRecord], str | None]:
            return job_store.list_jobs(
                ctx.store,
                name.subscription_id,
                name.resource_group,
                name.collection,
                state=options.filter_value,
                page_size=size,
                continuation=token,
            )

        return read_page(fetch, position=skiptoken, skip=options.skip, top=options.top)

    records, position = await run_in_threadpool(work)
    link = next_link(request, position, **{"$top": top, "$filter": filter_text})
    now = ctx.clock()
    return json_response(
        page_body([job_to_wire(r, now=now, version=ctx.version) for r in records], link)
    )


@router.get(
    paths.JOB + "/history",
    operation_id="Jobs_ListJobHistory",
    summary="List a job's history, newest first",
    description="`$filter`: `status eq Failed` (Completed, Failed, Postponed; quoted or not).",
    responses=responses(200, 404, schema="JobHistoryListResult"),
)
async def list_job_history(
    request: Request,
    ctx: Ctx,
    name: JobPath,
    top: TOP = None,
    skip: SKIP = None,
    filter_text: FILTER = None,
    skiptoken: SKIPTOKEN = None,
) -> Response:
    options = parse_options(top, skip, filter_text, field="status", values=HISTORY_STATUSES)

    def work() -> tuple[JobRecord, list[HistoryEntry], str | None]:
        job = job_service.get_job(ctx, name)

        def fetch(size: int, token: str | None) -> tuple[list[HistoryEntry], str | None]:
            return list_history(
                ctx.store,
                job.history_key,
                status=options.filter_value,
                page_size=size,
                continuation=token,
            )

        entries, position = read_page(fetch, position=skiptoken, skip=options.skip, top=options.top)
        return job, entries, position

    job, entries, position = await run_in_threadpool(work)
    link = next_link(request, position, **{"$top": top, "$filter": filter_text})
    return json_response(page_body([_history_to_wire(job, e) for e in entries], link))


def _history_to_wire(job: JobRecord, entry: HistoryEntry) -> dict[str, Any]:
    job_id = arm.job_id(job.subscription_id, job.resource_group, job.collection_name, job.name)
    return {
        "id": f"{job_id}/history/{entry.history_id}",
        "type": arm.HISTORY_TYPE,
        "name": f"{job.collection_name}/{job.name}/{entry.history_id}",
        "properties": entry.to_properties(),
    }
