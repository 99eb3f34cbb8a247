"""The buttons: enable / disable a job or a collection, run now, delete, create a
collection. Each is a CSRF-checked POST that calls the API's own service and redirects back
(post/redirect/get), with a one-line notice of what happened."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from scheduler_lib.api import collection_service, job_service
from scheduler_lib.api.backfill_routes import backfill_job
from scheduler_lib.api.collection_service import CollectionName
from scheduler_lib.dashboard.handlers import mutating, page
from scheduler_lib.dashboard.pages import COLLECTION, JOB, collection_name, job_name, show_job
from scheduler_lib.dashboard.web import UI, collection_url, context, job_url, redirect
from scheduler_lib.errors import ConflictError, NotFoundError, ValidationError

router = APIRouter(include_in_schema=False)


def _back(url: str, notice: str) -> Response:
    return redirect(url, notice=notice)


@router.post(JOB + "/enable")
@router.post(JOB + "/disable")
@page
async def set_job_state(request: Request) -> Response:
    await mutating(request)
    ctx = context(request)
    name = job_name(request)
    state = "Enabled" if request.url.path.endswith("/enable") else "Disabled"
    body = {"properties": {"state": state}}
    await run_in_threadpool(lambda: job_service.patch_job(ctx, name, body, None, ctx.clock()))
    url = job_url(name.subscription_id, name.resource_group, name.collection, name.job)
    return _back(url, f"Job {name.job} is {state}.")


@router.post(JOB + "/run")
@page
async def run_now(request: Request) -> Response:
    await mutating(request)
    ctx = context(request)
    name = job_name(request)
    await run_in_threadpool(lambda: job_service.run_job(ctx, name, now=ctx.clock()))
    url = job_url(name.subscription_id, name.resource_group, name.collection, name.job)
    return _back(url, f"Job {name.job} was queued to run now.")


@router.post(JOB + "/delete")
@page
async def delete_job(request: Request) -> Response:
    _, form = await mutating(request)
    ctx = context(request)
    name = job_name(request)
    if form.get("confirm", "").strip() != name.job:
        raise ValidationError("confirm", f"type the job's name ({name.job}) to delete it")
    await run_in_threadpool(lambda: job_service.delete_job(ctx, name, client_etag=None))
    url = collection_url(name.subscription_id, name.resource_group, name.collection)
    return _back(url, f"Job {name.job} was deleted.")


@router.post(COLLECTION + "/enable")
@router.post(COLLECTION + "/disable")
@page
async def set_collection_state(request: Request) -> Response:
    await mutating(request)
    ctx = context(request)
    name = collection_name(request)
    state = "Enabled" if request.url.path.endswith("/enable") else "Disabled"
    await run_in_threadpool(
        lambda: collection_service.set_state(ctx, name, state, client_etag=None, now=ctx.clock())
    )
    url = collection_url(name.subscription_id, name.resource_group, name.collection)
    return _back(url, f"Collection {name.collection} is {state}.")


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
    return _back(url, f"Collection {name.collection} is ready.")


@router.post(JOB + "/backfill")
@page
async def backfill(request: Request) -> Response:
    """The job page's Backfill form: the REST route's own `backfill_job` (same range rules,
    same queueing); the page shows what was queued, or the error at the field it names."""
    session, form = await mutating(request)
    ctx = context(request)
    sent = {k: form.get(k, "").strip() for k in ("from", "to")}
    body = {k: v for k, v in sent.items() if v}
    try:
        queued = await run_in_threadpool(backfill_job, ctx, job_name(request), body, ctx.clock())
    except ValidationError as exc:
        errors = {exc.field: str(exc)}
        return await show_job(request, session, {**sent, "errors": errors}, status=400)
    return await show_job(request, session, {**sent, "queued": queued})
