"""`GET .../jobCollections/{c}/export` (api-version 2026-12-01 only): the collection and its
jobs as one JSON bundle (`wire/bundle.py`), secrets left out and named, optionally with the
last 60 days of history. The use case is `service/export.py`; this is the HTTP around it.

The bundle is streamed as it is read (one page of jobs at a time), so its size is not held
in memory here. Every refusal (a 2016-03-01 request, a bad `includeHistory`, no such
collection) is decided before the first byte, as an ordinary ARM error.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from scheduler_lib.api import paths
from scheduler_lib.api.dependencies import CollectionPath, Ctx
from scheduler_lib.api.docs import operation
from scheduler_lib.api.openapi_versions import since
from scheduler_lib.errors import ValidationError
from scheduler_lib.service.export import ExportRequest, export_collection
from scheduler_lib.wire import bundle
from scheduler_lib.wire.versions import LATEST_VERSION, require

router = APIRouter(tags=["Job collections"])

HISTORY = Annotated[
    str | None,
    Query(
        alias="includeHistory",
        description=f"true: each job's history of the last {bundle.HISTORY_WINDOW.days} days "
        f"(at most {bundle.HISTORY_PER_JOB} entries per job, newest first)",
    ),
]


_ANSWER = {"content": {"application/json": {"schema": bundle.SCHEMA}}}


@router.get(paths.EXPORT, openapi_extra={
    **since(LATEST_VERSION), "responses": {"200": _ANSWER}}, **operation(
    "JobCollections_Export",
    "Export a job collection and its jobs as one bundle (api-version 2026-12-01)",
    (200, 400, 404),
    description="One JSON document (`kind` SchedulerExportBundle, `bundleVersion` "
    f"{bundle.BUNDLE_VERSION}): the collection and each job as GET returns them in "
    "2026-12-01 (secrets never included), `secrets` naming each secret left out by job and "
    "JSON path, `exportedAt`, and with `includeHistory=true` each job's history of the last "
    f"{bundle.HISTORY_WINDOW.days} days (at most {bundle.HISTORY_PER_JOB} entries per job; "
    "`truncated` when there were more). Restore it with `python -m scheduler_lib import` "
    "(docs/export.md).",
))  # fmt: skip
async def export(ctx: Ctx, name: CollectionPath, history: HISTORY = None) -> Response:
    require(ctx.version, LATEST_VERSION, "an export")
    request = ExportRequest(
        name.subscription_id, name.resource_group, name.collection, _flag(history)
    )
    now = ctx.clock()
    # `ctx.store` may create the tables on first use: off the event loop, as every route.
    chunks = await run_in_threadpool(lambda: export_collection(ctx.store, request, now=now))
    return StreamingResponse(
        (chunk.encode() for chunk in chunks), media_type="application/json; charset=utf-8"
    )


def _flag(value: str | None) -> bool:
    """`includeHistory`: true or false (any case), nothing else."""
    if value is None or value.lower() == "false":
        return False
    if value.lower() == "true":
        return True
    raise ValidationError("includeHistory", "must be true or false")
