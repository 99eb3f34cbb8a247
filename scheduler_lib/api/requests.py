"""Reading requests and writing responses: JSON bodies, ETags, `If-Match`, api-version
(whether `If-Match` matches is the services' rule: `service.context.check_if_match`).
A write of one job is read in one step into a typed request (`JobWrite`), which its route
hands to the use case.

Bodies are parsed here rather than by FastAPI so that every failure is a 400 ARM error
naming what is wrong (FastAPI would answer 422 with its own shape).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from scheduler_lib.api.docs import API_VERSION_QUERY
from scheduler_lib.errors import ValidationError
from scheduler_lib.service.context import ApiContext
from scheduler_lib.service.jobs import JobName
from scheduler_lib.wire import request_json
from scheduler_lib.wire.versions import ApiVersion, parse_version

#: The largest request body read at all (a job is limited to 16 KB of JSON; this leaves
#: room for whitespace and the resource envelope).
MAX_BODY_BYTES = 64 * 1024


W = TypeVar("W")
#: A write of the service layer: (body, the client's If-Match, the request's instant) -> result.
Write = Callable[[Any, str | None, datetime], W]


async def run_write(request: Request, ctx: ApiContext, write: Write[W]) -> tuple[W, datetime]:
    """What every body-carrying write route does first: read the JSON body, `If-Match` and
    the request's instant once, then run the storage work off the event loop."""
    body = await read_json(request)
    now = ctx.clock()
    client_etag = if_match(request)
    return await run_in_threadpool(lambda: write(body, client_etag, now)), now


@dataclass(frozen=True)
class JobWrite:
    """A PUT or PATCH of one job, read whole before the use case runs: the context with the
    request's api-version, the job's name from the path, the JSON body, the client's
    `If-Match` and the request's instant."""

    ctx: ApiContext
    name: JobName
    body: Any
    client_etag: str | None
    now: datetime


async def read_job_write(
    request: Request,
    subscriptionId: str,
    resourceGroupName: str,
    jobCollectionName: str,
    jobName: str,
    api_version_query: API_VERSION_QUERY = None,
) -> JobWrite:
    """The one reading step of a job's PUT or PATCH (a FastAPI dependency, so the path's
    parameters are still documented): the api-version first (a bad one is a 400 before the
    body is read), then the body, `If-Match` and the instant."""
    ctx = request_context(request)
    name = JobName(subscriptionId, resourceGroupName, jobCollectionName, jobName)
    body = await read_json(request)
    return JobWrite(ctx, name, body, if_match(request), ctx.clock())


JobWriteRequest = Annotated[JobWrite, Depends(read_job_write)]


def request_context(request: Request) -> ApiContext:
    """The app's context for this request, carrying the request's `api-version`."""
    return replace(request.app.state.context, version=api_version(request))


async def read_json(request: Request, limit: int = MAX_BODY_BYTES) -> Any:
    """The request body as JSON, or a ValidationError (400) saying why not: every route that
    takes a body (jobs, collections, PATCH, preview, backfill) reads it here (`limit`: the
    import's, which carries whole files, is larger)."""
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise ValidationError("body", f"is larger than {limit} bytes")
    raw = await request.body()
    if len(raw) > limit:
        raise ValidationError("body", f"is larger than {limit} bytes")
    if not raw.strip():
        raise ValidationError("body", "is required (a JSON object)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValidationError("body", "is not UTF-8 text") from None
    return request_json.parse(text, "body")  # JSON, and text in every string (no lone surrogate)


def api_version(request: Request) -> ApiVersion:
    """The request's version: 2016-03-01 (what the SDK always sends; absent too) or
    2026-12-01 (the extensions); anything else is a 400 naming `api-version`."""
    return parse_version(request.query_params.get("api-version"))


def if_match(request: Request) -> str | None:
    return request.headers.get("if-match")


def json_response(body: Any, status: int = 200, *, etag: str | None = None) -> JSONResponse:
    headers = {"ETag": etag} if etag else None
    return JSONResponse(body, status_code=status, headers=headers)


def empty_response(status: int = 200, *, etag: str | None = None) -> Response:
    headers = {"ETag": etag} if etag else None
    return Response(status_code=status, headers=headers)
