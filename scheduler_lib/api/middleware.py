"""The ASGI layer around every route: request id, path case (`RouteCase`), authentication
(with the limit on wrong keys per client address, `auth_limit`), and the last line of
defence that turns any unexpected exception into an ARM 500 body. It is the request's one
pass before its
route: each step runs once, in order, in `ArmMiddleware.__call__` (the key check is one call
to `AuthLimiter.admits`).

It is a plain ASGI middleware (not Starlette's BaseHTTPMiddleware) so that the 401 and 500
answers it writes carry `x-ms-request-id` like every other response.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from fastapi import routing as fastapi_routing
from starlette.requests import ClientDisconnect
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from scheduler_lib.api.auth_limit import AuthLimiter
from scheduler_lib.api.docs_page import ASSETS, DOCS_PATH
from scheduler_lib.api.errors import arm_body, arm_headers, http_status
from scheduler_lib.api.openapi_versions import DOCUMENT_PATHS
from scheduler_lib.api.paths import PREFIX
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


@dataclass(frozen=True)
class _Template:
    """A route's path as segments: a literal's canonical spelling, or None (a parameter)."""

    segments: tuple[str | None, ...]
    rest: bool  # any further segments fit too (files under a mount, a `{name:path}`)
    lowered: tuple[str | None, ...] = field(init=False)
    rank: tuple[bool, ...] = field(init=False)  # a literal at each position

    def __post_init__(self) -> None:
        lowered = tuple(s.lower() if s is not None else None for s in self.segments)
        object.__setattr__(self, "lowered", lowered)
        object.__setattr__(self, "rank", tuple(s is not None for s in self.segments))

    def fits(self, parts: list[str]) -> bool:
        """The route would serve `parts` if its literals were in their case."""
        size = len(self.segments)
        if len(parts) < size or (len(parts) > size and not self.rest):
            return False
        for lit, part in zip(self.lowered, parts, strict=False):  # a mount's: its prefix
            if lit is not None and lit != part.lower():
                return False
        return True

    def spell(self, parts: list[str]) -> str:
        """`parts` with this route's literals in their declared case."""
        pairs = zip(self.segments, parts, strict=False)
        head = [part if lit is None else lit for lit, part in pairs]
        return "/".join(head + parts[len(self.segments) :])


class RouteCase:
    """Paths in any case, for every route of the app: a request whose path fits a route's only
    in another case (`/API/HEALTH`, `.../RESOURCEGROUPS/...`, `/api/UI/`) is given the route's
    own spelling before it is routed. ARM reads paths case-insensitively, and so does the
    Functions host (ASP.NET Core routing) in front of us; Starlette alone matches them exactly.

    The table is built from the app's own routes (`RouteCase.of`), so a route added anywhere
    (the ARM routes, health, metrics, the docs, the dashboard `runtime` mounts) is
    case-insensitive without being listed again. Only the route's literal segments are
    rewritten: names (a subscription, a collection, a job) stay as sent, so a job named `RUN`
    stays `RUN`. When two routes fit, the one with a literal at the first segment where they
    differ wins, as in ASP.NET Core (a literal beats a parameter); between equals, the first
    declared, as Starlette routes.
    """

    def __init__(self, paths: Iterable[tuple[str, bool]]) -> None:
        """`paths`: each route's path template, and whether more segments may follow it."""
        self._exact: dict[int, list[_Template]] = {}
        self._rest: list[_Template] = []
        for path, rest in dict.fromkeys(paths):  # a path once, whatever its methods
            template = _template(path, rest)
            if template.rest:
                self._rest.append(template)
            else:
                self._exact.setdefault(len(template.segments), []).append(template)

    @classmethod
    def of(cls, routes: Iterable[BaseRoute]) -> RouteCase:
        """The table of `routes` (an app's `routes`, mounts' routes included)."""
        return cls(_paths(routes, ""))

    def canonical(self, path: str) -> str:
        """`path` in the spelling of the route it fits in any case (unchanged if none)."""
        parts = path.split("/")
        best: _Template | None = None
        for template in chain(self._exact.get(len(parts), ()), self._rest):
            if template.fits(parts) and (best is None or template.rank > best.rank):
                best = template
        return path if best is None else best.spell(parts)


def _paths(routes: Iterable[BaseRoute], prefix: str) -> Iterator[tuple[str, bool]]:
    for route, path in _with_paths(routes):
        if isinstance(route, Mount):
            if route.routes:
                yield from _paths(route.routes, prefix + route.path)
            else:  # an ASGI app of its own (static files): whatever is under its path
                yield prefix + route.path, True
        elif isinstance(route, Route | WebSocketRoute):
            yield prefix + path, False


def _with_paths(routes: Iterable[BaseRoute]) -> Iterator[tuple[BaseRoute, str]]:
    """Each route with its full path: FastAPI 0.165 keeps an included router as one entry
    of `app.routes` and lists its routes, prefixed, through `iter_route_contexts` (what its
    OpenAPI document reads); before it, `include_router` copied them into `app.routes`."""
    contexts = getattr(fastapi_routing, "iter_route_contexts", None)
    if contexts is None:
        yield from ((route, getattr(route, "path", "")) for route in routes)
        return
    for context in contexts(list(routes)):
        yield context.original_route, context.path or getattr(context.original_route, "path", "")


def _template(path: str, rest: bool) -> _Template:
    """Segments of `path`; a segment holding a parameter is a parameter (it is not
    rewritten), and a `{name:path}` one fits the rest of the path."""
    segments: list[str | None] = []
    for segment in path.split("/"):
        if "{" not in segment:
            segments.append(segment)
        elif segment.endswith(":path}"):
            return _Template(tuple(segments), rest=True)
        else:
            segments.append(None)
    return _Template(tuple(segments), rest)


class ArmMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        *,
        routes: list[BaseRoute],
        api_keys: tuple[str, ...],
        front_end: FrontEnd,
        limiter: AuthLimiter,
        unavailable: str | None = None,
    ) -> None:
        self.app = app
        # The app's own list, read on the first request: the dashboard is mounted after
        # the API is built (`runtime.create_web_app`), and its paths are in any case too.
        self.routes = routes
        self.route_case: RouteCase | None = None
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

        if self.route_case is None:
            self.route_case = RouteCase.of(self.routes)
        scope = {**scope, "path": self.route_case.canonical(scope["path"])}
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
