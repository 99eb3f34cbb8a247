"""The pages that show: overview, a collection's jobs, one job, the timeline."""

from __future__ import annotations

from datetime import timedelta
from typing import TypedDict

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from scheduler_lib.dashboard import runs, views
from scheduler_lib.dashboard.handlers import page
from scheduler_lib.dashboard.session import Session
from scheduler_lib.dashboard.svg import histogram, outcomes_chart
from scheduler_lib.dashboard.web import UI, context, redirect, render, require_session
from scheduler_lib.dashboard.words import describe, policies
from scheduler_lib.domain import HISTORY_STATUSES, JOB_STATES, CollectionRecord, JobRecord
from scheduler_lib.service.bulk import JobResult
from scheduler_lib.service.collections import CollectionName, all_jobs, get_collection
from scheduler_lib.service.context import ApiContext
from scheduler_lib.service.deadman import DeadmanSetting, deadman_setting
from scheduler_lib.service.jobs import JobName, get_job
from scheduler_lib.service.lists import (
    HISTORY_KEEP,
    NoticeRecord,
    history_page,
    jobs_page,
    notices_page,
)
from scheduler_lib.service.overview import read_overview
from scheduler_lib.wire import signing
from scheduler_lib.wire.collections import collection_to_wire
from scheduler_lib.wire.jobs import job_to_wire
from scheduler_lib.wire.shapes import as_object

router = APIRouter(include_in_schema=False)
PAGE = 100
COLLECTION = UI + "/c/{sub}/{rg}/{coll}"
JOB = COLLECTION + "/jobs/{job}"
#: Timeline windows: span, bucket, most runs counted per job.
SPANS = {
    "24h": (timedelta(hours=24), timedelta(minutes=1)),
    "7d": (timedelta(days=7), timedelta(hours=1)),
}
TIMELINE_CAP = 2000


def collection_name(request: Request) -> CollectionName:
    p = request.path_params
    return CollectionName(p["sub"], p["rg"], p["coll"])


def job_name(request: Request) -> JobName:
    p = request.path_params
    return JobName(p["sub"], p["rg"], p["coll"], p["job"])


@router.get(UI)
async def root() -> Response:
    return redirect(UI + "/", status=307)


@router.get(UI + "/")
@page
async def overview(request: Request) -> Response:
    session = require_session(request)
    ctx = context(request)
    now = ctx.clock()
    data = await run_in_threadpool(read_overview, ctx, now=now)
    charts = [(w, outcomes_chart(w.hours, span=_SPAN_WORDS[w.name])) for w in data.windows]
    values = {"data": data, "now": views.when(now), "charts": charts, "spans": _SPAN_WORDS}
    return render(request, "overview.html", values, session=session)


_SPAN_WORDS = {"24h": "24 h", "7d": "7 days"}


def _matching(
    ctx: ApiContext,
    record: CollectionRecord,
    state: str | None,
    search: str,
    position: str | None,
    tag: tuple[str, str | None] | None = None,
) -> tuple[list[JobRecord], str | None]:
    """One page of jobs (a store continuation token), or with a search or a `tag` (name,
    value or None), the page at offset `position` of the jobs whose name contains it and
    that have the tag (read through, the collection is bounded by its quota)."""

    if not search and tag is None:
        where = (record.subscription_id, record.resource_group, record.name)
        return jobs_page(ctx, where, state=state, page_size=PAGE, continuation=position)
    found = [
        j
        for j in all_jobs(ctx, record, state)
        if search.lower() in j.name.lower() and (tag is None or j.definition.has_tag(*tag))
    ]
    offset = int(position) if position and position.isdigit() else 0
    more = str(offset + PAGE) if offset + PAGE < len(found) else None
    return found[offset : offset + PAGE], more


class BulkSaid(TypedDict, total=False):
    """What the collection page's bulk buttons did (`dashboard/bulk`): an error with the
    names that were ticked, or the operation's results and their summary."""

    error: str
    ticked: list[str]
    operation: str
    results: list[JobResult]
    summary: dict[str, int]


#: What the job page's Backfill form was sent (`from`, `to`) and what came of it: `errors`
#: by field, or the occurrences `queued` (`dashboard/actions.backfill`).
BackfillSaid = TypedDict(
    "BackfillSaid",
    {"from": str, "to": str, "errors": dict[str, str], "queued": list[dict[str, str]]},
    total=False,
)


@router.get(COLLECTION)
@page
async def collection(request: Request) -> Response:
    return await show_collection(request, require_session(request))


async def show_collection(
    request: Request, session: Session, bulk: BulkSaid | None = None, status: int = 200
) -> Response:
    """The collection page; `bulk`: what the bulk buttons did (`dashboard/bulk`)."""
    ctx = context(request)
    name = collection_name(request)
    query = request.query_params
    state = query.get("state") if query.get("state") in JOB_STATES else None
    search = query.get("q", "").strip()
    tag_name, tag_value = query.get("tag", "").strip(), query.get("value", "")
    tag = (tag_name, tag_value or None) if tag_name else None

    def work() -> tuple[CollectionRecord, list[views.JobRow], str | None]:
        record = get_collection(ctx, name)
        jobs, more = _matching(ctx, record, state, search, query.get("page"), tag)
        return record, views.job_rows(ctx, jobs, now=ctx.clock()), more

    record, rows, more = await run_in_threadpool(work)
    wire = collection_to_wire(record, ctx.version)  # the API's own redaction: names, no values
    values = {
        "collection": record,
        "signing_secrets": as_object(wire["properties"]).get(signing.PROPERTY) or [],
        "rows": rows,
        "more": more,
        "state": state or "",
        "q": search,
        "states": JOB_STATES,
        "page": query.get("page", ""),
        "tag": tag_name,
        "value": tag_value,
        "bulk": bulk or {},
    }
    return render(request, "collection.html", values, session=session, status=status)


@router.get(COLLECTION + "/timeline")
@page
async def timeline(request: Request) -> Response:
    session = require_session(request)
    ctx = context(request)
    name = collection_name(request)
    span_name = request.query_params.get("span", "24h")
    span, bucket = SPANS.get(span_name, SPANS["24h"])
    now = ctx.clock()

    def work() -> tuple[CollectionRecord, list[JobRecord], runs.Timeline]:
        record = get_collection(ctx, name)
        jobs = all_jobs(ctx, record, "Enabled")
        found = runs.upcoming_buckets(jobs, now=now, span=span, bucket=bucket, cap=TIMELINE_CAP)
        return record, jobs, found

    record, jobs, found = await run_in_threadpool(work)
    buckets, capped = found.buckets, found.capped
    busiest = sorted((b for b in buckets if b[1]), key=lambda b: -b[1])[:5]
    values = {
        "collection": record,
        "chart": histogram(buckets, unit=_unit(bucket)),
        "zoom": histogram(found.seconds, unit="second") if found.seconds else "",
        "zoom_minute": views.when(found.seconds[0][0]) if found.seconds else "",
        "busiest": [(views.when(at), count) for at, count in busiest],
        "span": span_name if span_name in SPANS else "24h",
        "jobs": len(jobs),
        "total": sum(c for _, c in buckets),
        "capped": capped,
        "cap": TIMELINE_CAP,
        "unit": _unit(bucket),
    }
    return render(request, "timeline.html", values, session=session)


def _unit(bucket: timedelta) -> str:
    return "minute" if bucket == timedelta(minutes=1) else "hour"


@router.get(JOB)
@page
async def job(request: Request) -> Response:
    return await show_job(request, require_session(request))


async def show_job(
    request: Request, session: Session, backfill: BackfillSaid | None = None, status: int = 200
) -> Response:
    """The job page; `backfill`: what the Backfill form was sent and what came of it."""
    ctx = context(request)
    name = job_name(request)
    query = request.query_params
    wanted = query.get("status") if query.get("status") in HISTORY_STATUSES else None
    action = query.get("action") if query.get("action") in ("MainAction", "ErrorAction") else None
    now = ctx.clock()

    def work() -> tuple[JobRecord, list[views.HistoryRow], list[NoticeRecord], DeadmanSetting]:
        record = get_job(ctx, name)
        # One read of everything a job keeps (HISTORY_KEEP entries): the chart shows it all,
        # the table the newest page of it.
        entries, _ = history_page(ctx, record, status=wanted, page_size=HISTORY_KEEP)
        if action:
            entries = [e for e in entries if e.action_name == action]
        notices = notices_page(ctx, record, limit=views.NOTICES_SHOWN)
        return record, views.history_rows(record, entries), notices, deadman_setting(ctx, record)

    record, rows, notices, deadman = await run_in_threadpool(work)
    wire = job_to_wire(record, now=now, version=ctx.version)  # the API's own redaction
    values = {
        "job": record,
        "wire": wire,
        "definition": views.json_pretty(wire["properties"]),
        "words": describe(record.definition),
        "policies": policies(record.definition),
        "pause": views.pause_of(wire["properties"]),
        "rows": rows[: views.HISTORY_PAGE],
        "total": len(rows),
        "chart": views.chart(rows),
        "next_runs": [run.label for run in runs.next_runs(record, now=now)],
        "status": wanted or "",
        "action": action or "",
        "statuses": HISTORY_STATUSES,
        "backfill": backfill or {},
        "notices": notices,  # the notifications sent for it (docs/notifications.md)
        "deadman": deadman,  # its dead-man window, its own or the collection's
    }
    return render(request, "job.html", values, session=session, status=status)
