"""How a dashboard route answers what goes wrong, in one place: no session -> the sign-in
page (401 for the JSON endpoint), a failed CSRF check -> 403, a scheduler error -> its
page with the status and `Retry-After` the REST API would give (`api.errors`: 429 for too
many wrong keys), storage trouble -> 503. Routes read their form bodies here (URL-encoded,
parsed by the standard library)."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Awaitable, Callable
from urllib.parse import parse_qsl

from azure.core.exceptions import AzureError
from starlette.requests import Request
from starlette.responses import Response

from scheduler_lib.api.errors import arm_error, arm_headers, http_status
from scheduler_lib.dashboard import csrf
from scheduler_lib.dashboard.session import Session
from scheduler_lib.dashboard.web import (
    UI,
    SignInRequired,
    json_answer,
    redirect,
    render,
    require_session,
    resolve_session,
)
from scheduler_lib.errors import SchedulerError, ValidationError
from scheduler_lib.service.context import storage_unavailable
from scheduler_lib.wire import request_json

log = logging.getLogger(__name__)
MAX_FORM_BYTES = 64 * 1024
Handler = Callable[[Request], Awaitable[Response]]


def page(handler: Handler) -> Handler:
    """Wrap a route of an HTML page or form post."""

    @functools.wraps(handler)
    async def wrapped(request: Request) -> Response:
        try:
            await resolve_session(request)
            return await handler(request)
        except SignInRequired:
            return redirect(f"{UI}/signin")
        except csrf.CsrfRejected as exc:
            return _problem(request, 403, "Request refused", str(exc))
        except SchedulerError as exc:
            problem = _problem(request, http_status(exc), "It did not work", _said(exc))
            problem.headers.update(arm_headers(exc))
            return problem
        except AzureError as exc:
            unavailable = storage_unavailable(exc)
            if unavailable is None:
                raise
            return _problem(request, 503, "Storage unavailable", unavailable.message)

    return wrapped


def endpoint(handler: Handler) -> Handler:
    """Wrap a JSON endpoint of the pages' scripts."""

    @functools.wraps(handler)
    async def wrapped(request: Request) -> Response:
        try:
            await resolve_session(request)
            return await handler(request)
        except SignInRequired:
            return json_answer({"error": {"code": "SignInRequired", "message": "sign in"}}, 401)
        except csrf.CsrfRejected as exc:
            return json_answer({"error": {"code": "Forbidden", "message": str(exc)}}, 403)
        except SchedulerError as exc:
            return json_answer({"error": arm_error(exc)}, http_status(exc))

    return wrapped


def _said(exc: SchedulerError) -> str:
    return f"{exc.target}: {exc.message}" if exc.target else exc.message


def _problem(request: Request, status: int, title: str, message: str) -> Response:
    try:
        session: Session | None = require_session(request)
    except SignInRequired:
        session = None
    values = {"title": title, "message": message, "status": status}
    return render(request, "problem.html", values, session=session, status=status)


async def read_form(request: Request) -> dict[str, str]:
    """An `application/x-www-form-urlencoded` body (what the pages send), or a JSON object of
    strings (what a script may send instead)."""
    raw = await request.body()
    if len(raw) > MAX_FORM_BYTES:
        raise ValidationError("body", f"is larger than {MAX_FORM_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValidationError("body", "is not UTF-8 text") from None
    if request.headers.get("content-type", "").startswith("application/json"):
        document = request_json.parse(text, "body")  # the API's reader: no lone surrogate
        if not isinstance(document, dict):
            raise ValidationError("body", "must be a JSON object")
        return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in document.items()}
    return dict(parse_qsl(text, keep_blank_values=True))


async def mutating(request: Request) -> tuple[Session, dict[str, str]]:
    """The session and the form of a request that changes something, after the CSRF checks."""
    session = require_session(request)
    form = await read_form(request)
    csrf.check(request, session, form.get(csrf.FIELD))
    return session, form
