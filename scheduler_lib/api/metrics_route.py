"""`GET /api/metrics`: the scheduler's metrics in the Prometheus text format (`metrics`).

Its own credential, not an API key: `Authorization: Bearer <token>` with a token of
`SCHEDULER_METRICS_TOKEN` (compared in constant time, `auth_limit.authorized`), so a
scraper can read counts and nothing else, and no key ever sits in a scrape URL. Without the
setting the route answers 404 as an unknown route does: closed by default, and not told
apart from a scheduler without metrics. The middleware lets the path through without an API
key (`PUBLIC_PATHS`); this route checks its own token.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from scheduler_lib.api.auth_limit import authorized
from scheduler_lib.api.errors import arm_body, http_status
from scheduler_lib.api.paths import PREFIX
from scheduler_lib.errors import AuthenticationError
from scheduler_lib.execution import ExecutionQueue
from scheduler_lib.metrics import CONTENT_TYPE, DISPATCH, EXECUTION, render, scrape
from scheduler_lib.service.context import ApiContext
from scheduler_lib.storage_patience import INTERACTIVE

METRICS_PATH = PREFIX + "/metrics"
router = APIRouter()


def _dispatch_queue(request: Request, context: ApiContext) -> ExecutionQueue:
    """The dispatch queue's client (for its depth), built on the first scrape of the app."""
    queue = getattr(request.app.state, "metrics_dispatch_queue", None)
    if queue is None:
        name = context.settings.dispatch_queue_name
        queue = ExecutionQueue(context.settings, patience=INTERACTIVE, name=name)
        request.app.state.metrics_dispatch_queue = queue
    return queue


@router.get(METRICS_PATH, include_in_schema=False)
async def metrics(request: Request) -> Response:
    context: ApiContext = request.app.state.context
    tokens = context.settings.metrics.tokens
    if not tokens:
        raise StarletteHTTPException(404)  # the answer of an unknown route
    if not authorized(request.headers.get("authorization"), tokens):
        error = AuthenticationError(
            "Send 'Authorization: Bearer <token>' with the metrics token (SCHEDULER_METRICS_TOKEN)."
        )
        headers = {"WWW-Authenticate": "Bearer"}
        return JSONResponse(arm_body(error), http_status(error), headers=headers)
    queues = {EXECUTION: context.queue, DISPATCH: _dispatch_queue(request, context)}
    scraped = await run_in_threadpool(scrape, context.store, queues, now=context.clock())
    return Response(render(scraped), media_type=CONTENT_TYPE)
