"""Routes of the paged lists: a collection's jobs (Jobs_List) and a job's history."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, Query, Request, Response
from starlette.concurrency import run_in_threadpool

from scheduler_lib.api import paths
from scheduler_lib.api.dependencies import CollectionPath, Ctx, JobPath
from scheduler_lib.api.docs import operation
from scheduler_lib.api.odata import ListOptions, parse_options
from scheduler_lib.api.paging import Fetch, next_link, page_body, read_page
from scheduler_lib.api.requests import json_response
from scheduler_lib.domain import HISTORY_STATUSES, JOB_STATES, JobRecord
from scheduler_lib.service import collections as collection_service
from scheduler_lib.service import jobs as job_service
from scheduler_lib.service.lists import HistoryEntry, history_page, jobs_page
from scheduler_lib.wire import arm
from scheduler_lib.wire.job_filter import parse_job_filter
from scheduler_lib.wire.jobs import job_to_wire
from scheduler_lib.wire.shapes import JobHistoryAnswer

T = TypeVar("T")
router = APIRouter(tags=["Jobs"])

TOP = Annotated[str | None, Query(alias="$top", description="page size, 1..100 (default 100)")]
SKIP = Annotated[str | None, Query(alias="$skip", description="rows to skip first")]
FILTER = Annotated[str | None, Query(alias="$filter", description="e.g. state eq 'Enabled'")]
SKIPTOKEN = Annotated[str | None, Query(alias="$skiptoken", description="from nextLink")]


@dataclass(frozen=True)
class PageQuery:
    """A list's query as sent: `$top`, `$skip`, `$filter` and the nextLink's `$skiptoken`."""

    top: str | None
    skip: str | None
    filter_text: str | None
    skiptoken: str | None

    def options(self, field: str, values: tuple[str, ...]) -> ListOptions:
        """Validated (a 400 naming the option), before anything is read."""
        return parse_options(self.top, self.skip, self.filter_text, field=field, values=values)

    def read(self, fetch: Fetch[T], options: ListOptions) -> tuple[list[T], str | None]:
        """The page's rows and the position after them (see `paging.read_page`)."""
        return read_page(fetch, position=self.skiptoken, skip=options.skip, top=options.top)

    def answer(self, request: Request, items: list[Any], position: str | None) -> Response:
        """The page, with a nextLink that repeats `$top` and `$filter` when more follow."""
        link = next_link(request, position, **{"$top": self.top, "$filter": self.filter_text})
        return json_response(page_body(request, items, link))


def _page_query(
    top: TOP = None, skip: SKIP = None, filter_text: FILTER = None, skiptoken: SKIPTOKEN = None
) -> PageQuery:
    return PageQuery(top, skip, filter_text, skiptoken)


#: Declared once, FastAPI still documents each of the four query parameters on both lists
#: (a route names it before `Ctx`, so `api-version` stays last among them).
Paged = Annotated[PageQuery, Depends(_page_query)]


@router.get(
    paths.JOBS,
    **operation(
        "Jobs_List",
        "List the jobs of a job collection",
        (200, 404),
        "JobListResult",
        description="`$filter`: `state eq 'Enabled'` (quoted or not, any case); 2026-12-01 "
        "also `tagName eq 'env' and tagValue eq 'prod'`, clauses joined by `and`.",
    ),
)
async def list_jobs(request: Request, query: Paged, ctx: Ctx, name: CollectionPath) -> Response:
    options = parse_options(query.top, query.skip, None, field="state", values=JOB_STATES)
    wanted = parse_job_filter(query.filter_text, ctx.version)

    def work() -> tuple[list[JobRecord], str | None]:
        collection_service.get_collection(ctx, name)  # 404 for a missing collection

        def fetch(size: int, token: str | None) -> tuple[list[JobRecord], str | None]:
            where = (name.subscription_id, name.resource_group, name.collection)
            page, after = jobs_page(
                ctx, where, state=wanted.state, page_size=size, continuation=token
            )
            # A tag is in the stored definition: kept here, the paging counts what is kept.
            return [job for job in page if wanted.matches(job)], after

        return query.read(fetch, options)

    records, position = await run_in_threadpool(work)
    now = ctx.clock()
    return query.answer(
        request, [job_to_wire(r, now=now, version=ctx.version) for r in records], position
    )


@router.get(
    paths.HISTORY,
    **operation(
        "Jobs_ListJobHistory",
        "List a job's history, newest first",
        (200, 404),
        "JobHistoryListResult",
        description="`$filter`: `status eq Failed` (Completed, Failed, Postponed, Skipped; quoted "
        "or not).",
    ),
)
async def list_job_history(request: Request, query: Paged, ctx: Ctx, name: JobPath) -> Response:
    options = query.options("status", HISTORY_STATUSES)

    def work() -> tuple[JobRecord, list[HistoryEntry], str | None]:
        job = job_service.get_job(ctx, name)

        def fetch(size: int, token: str | None) -> tuple[list[HistoryEntry], str | None]:
            return history_page(
                ctx, job, status=options.filter_value, page_size=size, continuation=token
            )

        return (job, *query.read(fetch, options))

    job, entries, position = await run_in_threadpool(work)
    return query.answer(request, [_history_to_wire(job, e) for e in entries], position)


def _history_to_wire(job: JobRecord, entry: HistoryEntry) -> JobHistoryAnswer:
    job_id = arm.job_id(job.subscription_id, job.resource_group, job.collection_name, job.name)
    return {
        "id": f"{job_id}/history/{entry.history_id}",
        "type": arm.HISTORY_TYPE,
        "name": f"{job.collection_name}/{job.name}/{entry.history_id}",
        "properties": entry.to_properties(),
    }
