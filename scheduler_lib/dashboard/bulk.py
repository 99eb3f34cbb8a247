"""The collection page's bulk buttons: Enable, Disable, Run now or Delete the jobs ticked
in its list (or, with "all shown" ticked, every job the page lists, so that selecting all
works without JavaScript too). A CSRF-checked POST that calls the REST route's own
`bulk_routes.bulk` (the same selection rules, bound and per-job outcomes) and shows the
collection page again with one line per job saying what happened. Delete asks for the word
`delete` typed, as a single job's Delete asks for its name: no script needed to confirm."""

from __future__ import annotations

from urllib.parse import parse_qsl

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from scheduler_lib.dashboard.handlers import mutating, page
from scheduler_lib.dashboard.pages import COLLECTION, BulkSaid, collection_name, show_collection
from scheduler_lib.dashboard.web import context
from scheduler_lib.errors import ValidationError
from scheduler_lib.service.bulk import summary
from scheduler_lib.service.bulk_jobs import bulk

router = APIRouter(include_in_schema=False)


@router.post(COLLECTION + "/bulk")
@page
async def bulk_buttons(request: Request) -> Response:
    session, form = await mutating(request)
    fields = parse_qsl((await request.body()).decode("utf-8"), keep_blank_values=True)
    ticked = [v for k, v in fields if k == "job"]
    if form.get("all"):
        ticked = [v for k, v in fields if k == "shown"]
    operation = form.get("operation", "")
    ctx = context(request)
    try:
        if operation == "Delete" and form.get("confirm", "").strip().lower() != "delete":
            raise ValidationError("confirm", "type delete to delete the selected jobs")
        if not ticked:
            raise ValidationError("names", "tick at least one job")
        body = {"operation": operation, "names": ticked}
        results = await run_in_threadpool(bulk, ctx, collection_name(request), body, ctx.clock())
    except ValidationError as exc:
        said: BulkSaid = {"error": f"{exc.field}: {exc.message}", "ticked": ticked}
        return await show_collection(request, session, said, status=400)
    done: BulkSaid = {"operation": operation, "results": results, "summary": summary(results)}
    return await show_collection(request, session, done)
