"""What every dashboard page shares: its paths, the templates, the security headers, and
who is signed in.

Templates are Jinja2 with autoescaping on, so a job named `<script>` is text on the page,
never markup. Every response carries a strict Content-Security-Policy: scripts and styles
only from this app's own static files (no inline script, no CDN), images only from itself
or `data:` (the charts are inline SVG elements, which CSP does not treat as images).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import cache
from typing import Any
from urllib.parse import quote, unquote

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from scheduler_lib.dashboard import csrf
from scheduler_lib.dashboard.session import (
    COOKIE,
    Session,
    easy_auth_session,
    read_cookie,
)
from scheduler_lib.dashboard.words import FIELD
from scheduler_lib.service.context import ApiContext
from scheduler_lib.service.sessions import session_is_open
from scheduler_lib.wire.versions import LATEST_VERSION

#: Under the Functions route prefix `api` (host.json): everything the app serves is /api/...
UI = "/api/ui"
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)
#: The cookie carrying "what was just done" from a button to the page it redirects to.
NOTICE = "scheduler_ui_notice"
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


class SignInRequired(Exception):
    """No valid session: pages redirect to the sign-in page, JSON endpoints answer 401."""


def context(request: Request) -> ApiContext:
    """The API's context at the newest api-version: the dashboard is this scheduler's own
    client, so it reads and keeps every extension a job has (a form saved at 2016-03-01
    would drop them, as that version's PUT does)."""
    return replace(request.app.state.context, version=LATEST_VERSION)


async def resolve_session(request: Request) -> None:
    """Find out who is signed in, once per request, before the route runs (`handlers` call
    it): a cookie's session must also still be open in storage, a blocking read, done in
    the thread pool. Until it is known (and if the read fails), nobody is signed in."""
    request.state.dashboard_session = None
    request.state.dashboard_session = await run_in_threadpool(_session, request)


def _session(request: Request) -> Session | None:
    ctx = context(request)
    keys = ctx.settings.api_keys
    if ctx.settings.dashboard_easy_auth:
        principal = easy_auth_session(request, keys)
        if principal is not None:
            return principal
    session = read_cookie(request.cookies.get(COOKIE), keys, clock=ctx.clock)
    if session is None or not session_is_open(ctx, session.session_id, now=ctx.clock()):
        return None
    return session


def current_session(request: Request) -> Session | None:
    """The session `resolve_session` found for this request."""
    found: Session | None = getattr(request.state, "dashboard_session", None)
    return found


def require_session(request: Request) -> Session:
    session = current_session(request)
    if session is None:
        raise SignInRequired()
    return session


@cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("scheduler_lib.dashboard", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["UI"] = UI
    env.globals["FIELD"] = FIELD  # wire names by their field (`words.Fields`)
    env.filters["q"] = lambda value: quote(str(value), safe="")
    return env


def render(
    request: Request,
    template: str,
    values: Mapping[str, Any],
    *,
    session: Session | None = None,
    status: int = 200,
) -> HTMLResponse:
    """A page from `template`, with the CSRF token of the session for its forms."""
    token = csrf.token_for(session) if session is not None else ""
    notice = unquote(request.cookies.get(NOTICE, "")) if session is not None else ""
    page = (
        environment()
        .get_template(template)
        .render(**values, session=session, csrf_token=token, request=request, notice=notice)
    )
    response = HTMLResponse(page, status_code=status, headers=SECURITY_HEADERS)
    if NOTICE in request.cookies:
        response.delete_cookie(NOTICE, path=UI, httponly=True, samesite="strict")
    return response


def redirect(location: str, *, status: int = 303, notice: str | None = None) -> Response:
    """A redirect; with `notice`, the next page says what was done. The notice travels in a
    short-lived cookie of the dashboard's own, not in the URL: a link from elsewhere cannot
    make a page say something the dashboard did not."""
    response = RedirectResponse(location, status_code=status, headers=SECURITY_HEADERS)
    if notice is not None:
        response.set_cookie(NOTICE, quote(notice), max_age=60, path=UI, httponly=True,
                            samesite="strict")  # fmt: skip
    return response


def json_answer(body: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(body, status_code=status, headers=SECURITY_HEADERS)


def collection_url(subscription: str, group: str, collection: str) -> str:
    return f"{UI}/c/{quote(subscription, safe='')}/{quote(group, safe='')}/" + quote(
        collection, safe=""
    )


def job_url(subscription: str, group: str, collection: str, job: str) -> str:
    return collection_url(subscription, group, collection) + "/jobs/" + quote(job, safe="")
