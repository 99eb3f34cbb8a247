"""The ASGI layer around every route: request id, ARM path case, authentication (with the
limit on wrong keys per client address, `auth_limit`), and the last line of defence that
turns any unexpected exception into an ARM 500 body. It is the request's one pass before its
route: each step runs once, in order, in `ArmMiddleware.__call__` (the key check is one call
to `AuthLimiter.admits`).

It is a plain ASGI middleware (not Starlette's BaseHTTPMiddleware) so that the 401 and 500
answers it writes carry `x-ms-request-id` like every other response.
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from scheduler_lib.api.auth_limit import AuthLimiter
from scheduler_lib.api.docs_page import ASSETS, DOCS_PATH
from scheduler_lib.api.errors import arm_body, arm_headers, http_status
from scheduler_lib.api.openapi_versions import DOCUMENT_PATHS
from scheduler_lib.api.paths import ARM_PATHS, PREFIX
from scheduler_lib.errors import (
    AuthenticationError,
    SchedulerError,
    ServiceUnavailableError,
    TooManyRequestsError,
)
from scheduler_lib.front_end import FrontEnd

log = logging.getLogger(__name__)
#: Served without a key: the health probe, and the API's documentation (it holds no data, and
#: a browser opening the docs page cannot send a bearer key). The metrics check a token of
#: their own (`metrics_route`).
PUBLIC_PATHS = frozenset(
    {PREFIX + "/health", PREFIX + "/metrics", DOCS_PATH, *ASSETS, *DOCUMENT_PATHS.values()}
)
#: The dashboard (`scheduler_lib.dashboard`): a browser cannot send a bearer key, so its pages
#: check their own session cookie instead (and send everyone else to the sign-in page).
DASHBOARD_PREFIX = PREFIX + "/ui"


def is_dashboard(path: str) -> bool:
    return path == DASHBOARD_PREFIX or path.startswith(DASHBOARD_PREFIX + "/")


#: Literal path segments, so that `resourcegroups` or `microsoft.scheduler` route too
#: (ARM treats them case-insensitively): those of every path a route serves (`paths`), so
#: that a new route's action (`bulk`, `backfill`, `import`) is not case-sensitive by omission.
LITERALS = {
    segment.lower(): segment
    for path in ARM_PATHS
    for segment in path.split("/")
    if segment and not segment.startswith("{")
}


def canonical_path(path: str) -> str:
    """`path` with its literal segments in canonical case; names are left as sent (a job
    named `run` stays `run`, since only positions where a literal belongs are touched)."""
    parts = path.split("/")
    # "", api, subscriptions, {sub}, then either providers, Microsoft.Scheduler,
    # jobCollections|import, or resourceGroups, {rg}, providers, Microsoft.Scheduler,
    # jobCollections, {coll}, jobs|enable|disable|export|bulk, {job}, run|history|backfill
    if len(parts) > 4 and parts[4].lower() == "providers":
        positions: tuple[int, ...] = (1, 2, 4, 5, 6)
    else:
        positions = (1, 2, 4, 6, 7, 8, 10, 12)
    for index in positions:
        if index < len(parts):
            parts[index] = LITERALS.get(parts[index].lower(), parts[index])
    return "/".join(parts)


class ArmMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        *,
        api_keys: tuple[str, ...],
        front_end: FrontEnd,
        limiter: AuthLimiter,
        unavailable: str | None = None,
    ) -> None:
        self.app = app
        self.api_keys = api_keys
        self.front_end = front_end
        self.limiter = limiter
        self.unavailable = unavailable  # why no request can be served (Settings says)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = str(uuid.uuid4())
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        extra = [(b"x-ms-request-id", request_id.encode())]
        client_id = headers.get("x-ms-client-request-id")
        if client_id and len(client_id) <= 200 and client_id.isprintable():
            extra.append((b"x-ms-client-request-id", client_id.encode("latin-1")))
        started = False

        async def send_with_ids(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        if not is_dashboard(scope["path"]):  # its paths are not ARM paths
            scope = {**scope, "path": canonical_path(scope["path"])}
        if self.unavailable and scope["path"] not in PUBLIC_PATHS:
            # Before authentication: without its keys the API cannot tell a caller with a
            # valid key from one without, and a 401 would send them looking for the wrong fix.
            unavailable = ServiceUnavailableError(self.unavailable, retry_after=60)
            await _send_error(send_with_ids, unavailable)
            return
        public = scope["path"] in PUBLIC_PATHS or is_dashboard(scope["path"])
        if not public:
            client = self.front_end.client_address(scope)
            try:
                valid = self.limiter.admits(client, headers.get("authorization"), self.api_keys)
            except TooManyRequestsError as throttled:
                await _send_error(send_with_ids, throttled)
                return
            if not valid:
                error = AuthenticationError(
                    "Send 'Authorization: Bearer <key>' with a valid API key."
                )
                await _send_error(send_with_ids, error, www_authenticate=True)
                return
        try:
            await self.app(scope, receive, send_with_ids)
        except ClientDisconnect:
            # The client went away mid-body (a timeout, a killed script): nobody is left to
            # answer, and nothing was stored, since a body is read whole before any write.
            log.info("client disconnected during %s %s", scope.get("method"), scope["path"])
        except Exception:
            log.exception("unhandled error in %s %s", scope.get("method"), scope["path"])
            if not started:
                await _send_error(send_with_ids, SchedulerError("An internal error occurred."))


async def _send_error(send: Any, error: SchedulerError, *, www_authenticate: bool = False) -> None:
    body = json.dumps(arm_body(error)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if www_authenticate:
        headers.append((b"www-authenticate", b"Bearer"))
    headers += [(k.lower().encode(), v.encode()) for k, v in arm_headers(error).items()]
    await send({"type": "http.response.start", "status": http_status(error), "headers": headers})
    await send({"type": "http.response.body", "body": body})
