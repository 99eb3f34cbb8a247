"""The buttons: enable / disable a job or a collection, run now, delete, create a
collection. Each is a CSRF-checked POST that calls the API's own service and redirects back
(post/redirect/get), with a one-line notice of what happened."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from scheduler_lib.dashboard.handlers import mutating, page
from scheduler_lib.dashboard.pages import (
    COLLECTION,
    JOB,
    BackfillSaid,
    collection_name,
    job_name,
    show_job,
)
from scheduler_lib.dashboard.web import UI, collection_url, context, job_url, redirect
from scheduler_lib.errors import ConflictError, NotFoundError, ValidationError
from scheduler_lib.service import collections as collection_service
from scheduler_lib.service import jobs as job_service
from scheduler_lib.service.backfill import backfill_job
from scheduler_lib.service.collections import CollectionName
from scheduler_lib.service.context import ApiContext
from scheduler_lib.service.jobs import JobName

router = APIRouter(include_in_schema=False)


#: A job button's work: the API's own service on the named job, run off the
#: event loop; it answers the one-line notice the page shows afterwards.
JobWork = Callable[[ApiContext, JobName, dict[str, str]], str]


async def _on_job(request: Request, work: JobWork, *, leaves: bool = False) -> Response:
    """What every job button does: check the session and CSRF token, do `work`, and go
    back to the job's page (to its collection's when the job is gone, `leaves`)."""
    _, form = await mutating(request)
    ctx, name = context(request), job_name(request)
    notice = await run_in_threadpool(work, ctx, name, form)
    where = (name.subscription_id, name.resource_group, name.collection)
    return redirect(collection_url(*where) if leaves else job_url(*where, name.job), notice=notice)


def _state_asked(request: Request) -> str:
    return "Enabled" if request.url.path.endswith("/enable") else "Disabled"


@router.post(JOB + "/enable")
@router.post(JOB + "/disable")
@page
async def set_job_state(request: Request) -> Response:
    state = _state_asked(request)

    def work(ctx: ApiContext, name: JobName, form: dict[str, str]) -> str:
        body = {"properties": {"state": state}}
        job_service.patch_job(ctx, name, body, None, ctx.clock())
        return f"Job {name.job} is {state}."

    return await _on_job(request, work)


@router.post(JOB + "/run")
@page
async def run_now(request: Request) -> Response:
    def work(ctx: ApiContext, name: JobName, form: dict[str, str]) -> str:
        job_service.run_job(ctx, name, now=ctx.clock())
        return f"Job {name.job} was queued to run now."

    return await _on_job(request, work)


@router.post(JOB + "/delete")
@page
async def delete_job(request: Request) -> Response:
    def work(ctx: ApiContext, name: JobName, form: dict[str, str]) -> str:
        if form.get("confirm", "").strip() != name.job:
            raise ValidationError("confirm", f"type the job's name ({name.job}) to delete it")
        job_service.delete_job(ctx, name, client_etag=None)
        return f"Job {name.job} was deleted."

    return await _on_job(request, work, leaves=True)


@router.post(COLLECTION + "/enable")
@router.post(COLLECTION + "/disable")
@page
async def set_collection_state(request: Request) -> Response:
    await mutating(request)
    ctx, name, state = context(request), collection_name(request), _state_asked(request)
    await run_in_threadpool(
        lambda: collection_service.set_state(ctx, name, state, client_etag=None, now=ctx.clock())
    )
    url = collection_url(name.subscription_id, name.resource_group, name.collection)
    return redirect(url, notice=f"Collection {name.collection} is {state}.")


@router.post(UI + "/collections")
@page
async def create_collection(request: Request) -> Response:
    _, form = await mutating(request)
    ctx = context(request)
    name = CollectionName(
        form.get("subscription", "").strip(), form.get("group", "").strip(),
        form.get("name", "").strip(),
    )  # fmt: skip
    body = {
        "location": form.get("location", "").strip() or "local",
        "properties": {"sku": {"name": form.get("sku", "Standard")}},
    }

    def create() -> None:
        try:
            collection_service.get_collection(ctx, name)
        except NotFoundError:
            collection_service.put_collection(ctx, name, body, None, ctx.clock())
            return
        raise ConflictError(f"Job collection '{name.collection}' already exists.")

    await run_in_threadpool(create)
    url = collection_url(name.subscription_id, name.resource_group, name.collection)
    return redirect(url, notice=f"Collection {name.collection} is ready.")


@router.post(JOB + "/backfill")
@page
async def backfill(request: Request) -> Response:
    """The job page's Backfill form: the REST route's own `backfill_job` (same range rules,
    same queueing); the page shows what was queued, or the error at the field it names."""
    session, form = await mutating(request)
    ctx = context(request)
    sent: BackfillSaid = {"from": form.get("from", "").strip(), "to": form.get("to", "").strip()}
    body = {k: v for k, v in sent.items() if v}
    try:
        queued = await run_in_threadpool(backfill_job, ctx, job_name(request), body, ctx.clock())
    except ValidationError as exc:
        said: BackfillSaid = {**sent, "errors": {exc.field: str(exc)}}
        return await show_job(request, session, said, status=400)
    return await show_job(request, session, {**sent, "queued": queued})
