"""Sign-in and sign-out: a key pasted into a form becomes a session cookie.

The key travels once, in a POST body over the page's own origin; it is never put in a URL,
a log line or a page (a wrong key is answered with the form, empty). Wrong keys count
against the client address's limit, which the API's bearer keys share (`api.auth_limit`):
past it, the form answers 429 with `Retry-After`. The cookie is HttpOnly
(scripts cannot read it), SameSite=Strict (no other site can make the browser send it),
Secure whenever the browser reaches us over https, and limited to the dashboard's path.
"""

from __future__ import annotations

import logging

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from scheduler_lib.dashboard import csrf
from scheduler_lib.dashboard.handlers import mutating, page, read_form
from scheduler_lib.dashboard.session import (
    COOKIE,
    MAX_AGE,
    is_https,
    matching_key,
    new_cookie,
    new_session_id,
)
from scheduler_lib.dashboard.web import UI, context, current_session, redirect, render
from scheduler_lib.service.sessions import close_session, open_session

router = APIRouter(include_in_schema=False)
EASY_AUTH_LOGOUT = "/.auth/logout"
log = logging.getLogger(__name__)


@router.get(UI + "/signin")
@page
async def signin_page(request: Request) -> Response:
    if current_session(request) is not None:
        return redirect(UI + "/")
    ctx = context(request)
    values = {"error": "", "easy_auth": ctx.settings.dashboard_easy_auth}
    return render(request, "signin.html", values)


@router.post(UI + "/signin")
@page
async def signin(request: Request) -> Response:
    csrf.check_origin(request)  # no session yet; the origin check stops login CSRF
    ctx = context(request)
    form = await read_form(request)
    presented = form.get("key", "").strip()
    client = request.app.state.front_end.client_address(request.scope)
    key = presented and request.app.state.auth_limiter.attempt(
        client, lambda: matching_key(presented, ctx.settings.api_keys)
    )
    if not key:  # an empty form guesses nothing and does not count
        log.info("dashboard sign-in refused (wrong key)")
        values = {"error": "That is not one of this scheduler's API keys.", "easy_auth": False}
        return render(request, "signin.html", values, status=401)
    session_id, now = new_session_id(), ctx.clock()
    await run_in_threadpool(
        lambda: open_session(ctx, session_id, expires_at=now + MAX_AGE, now=now)
    )
    response = redirect(UI + "/")
    response.set_cookie(
        COOKIE,
        new_cookie(key, session_id, clock=ctx.clock),
        max_age=int(MAX_AGE.total_seconds()),
        path=UI,
        httponly=True,
        samesite="strict",
        secure=is_https(request),
    )
    return response


@router.post(UI + "/signout")
@page
async def signout(request: Request) -> Response:
    session, _ = await mutating(request)
    if not session.easy_auth:  # ended here, so a copy of the cookie is refused everywhere
        await run_in_threadpool(close_session, context(request), session.session_id)
    # Signed in by App Service authentication: only its own endpoint signs the user out.
    response = redirect(EASY_AUTH_LOGOUT if session.easy_auth else UI + "/signin")
    response.delete_cookie(COOKIE, path=UI, httponly=True, samesite="strict")
    return response
