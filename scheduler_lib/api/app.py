"""Builds the FastAPI app: routers, the ARM error mapping, the OpenAPI page.

Every error leaves as an ARM body `{"error": {"code", "message", "target"?}}`: the
scheduler's own errors with their status, FastAPI's and Starlette's (unknown route, wrong
method, a query parameter FastAPI rejected) as the matching ARM code.
"""

from __future__ import annotations

import logging
from typing import Any

from azure.core.exceptions import AzureError
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from scheduler_lib.api import (
    backfill_routes,
    bulk_routes,
    collection_routes,
    export_routes,
    import_routes,
    job_routes,
    list_routes,
    metrics_route,
    preview_routes,
)
from scheduler_lib.api.auth_limit import AuthLimiter
from scheduler_lib.api.docs import schemas, without_framework_errors
from scheduler_lib.api.docs_page import add_docs_page
from scheduler_lib.api.errors import arm_body, arm_headers, http_status
from scheduler_lib.api.middleware import ArmMiddleware
from scheduler_lib.api.openapi_versions import DOCUMENT_PATHS, versioned_document
from scheduler_lib.api.paths import PREFIX
from scheduler_lib.config import Settings
from scheduler_lib.errors import SchedulerError, ValidationError
from scheduler_lib.execution import ExecutionQueue
from scheduler_lib.front_end import FrontEnd
from scheduler_lib.health import check_health
from scheduler_lib.service.context import ApiContext
from scheduler_lib.storage_patience import INTERACTIVE
from scheduler_lib.store import TableStore, storage_unavailable
from scheduler_lib.timeutil import Clock, utc_now
from scheduler_lib.wire.shapes import JSONObject
from scheduler_lib.wire.versions import DEFAULT_VERSION, ApiVersion

log = logging.getLogger(__name__)
#: Seconds a probe is told to wait when the scheduler is unhealthy.
HEALTH_RETRY_AFTER = 5
_HTTP_CODES = {404: "NotFound", 405: "MethodNotAllowed", 415: "UnsupportedMediaType"}


def create_app(
    settings: Settings,
    *,
    clock: Clock = utc_now,
    store: TableStore | None = None,
    queue: ExecutionQueue | None = None,
) -> FastAPI:
    """The Azure Scheduler-compatible API over the storage `settings` point at (through
    `store` and `queue` when the host gives them; they should be built with
    `storage_patience.INTERACTIVE`, so that an outage is a quick 503). The dashboard is not
    part of it: `runtime.create_web_app` mounts it on this app (the API never imports it)."""
    front_end = FrontEnd.from_settings(settings)  # a malformed setting stops the app here
    app = FastAPI(
        title="Azure Scheduler-compatible API",
        version="2016-03-01",
        description=(
            "The Azure Scheduler 2016-03-01 REST API (drop-in for the `azure-mgmt-scheduler` "
            "SDK: set its `base_url` to `https://<app>/api`). Every route except /api/health and "
            "this documentation requires `Authorization: Bearer <key>`."
        ),
        docs_url=None,  # served by docs_page, without a CDN
        redoc_url=None,
        openapi_url=DOCUMENT_PATHS[DEFAULT_VERSION],
    )
    # Who the client is, and its wrong keys: shared by the middleware and the dashboard.
    app.state.front_end, app.state.auth_limiter = front_end, AuthLimiter(clock)
    app.state.context = ApiContext(
        settings=settings,
        clock=clock,
        table_store=store or TableStore(settings, patience=INTERACTIVE),
        execution_queue=queue or ExecutionQueue(settings, patience=INTERACTIVE),
    )
    for module in (collection_routes, job_routes, list_routes, preview_routes, backfill_routes):
        app.include_router(module.router)
    app.include_router(export_routes.router)  # api-version 2026-12-01 only
    app.include_router(import_routes.router)  # 2026-12-01: POST .../Microsoft.Scheduler/import
    app.include_router(bulk_routes.router)  # 2026-12-01: POST .../jobCollections/{c}/bulk
    app.include_router(metrics_route.router)  # its own token (SCHEDULER_METRICS_TOKEN)
    _add_health(app)
    _add_versioned_documents(app)
    add_docs_page(app)
    _add_error_handlers(app)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]  # FastAPI's documented hook
    app.add_middleware(
        ArmMiddleware,
        routes=app.router.routes,
        api_keys=settings.api_keys,
        front_end=front_end,
        limiter=app.state.auth_limiter,
        unavailable=settings.configuration_problem,
    )
    return app


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(SchedulerError)
    async def scheduler_error(request: Request, exc: SchedulerError) -> JSONResponse:
        return JSONResponse(
            arm_body(exc), status_code=http_status(exc), headers=arm_headers(exc) or None
        )

    @app.exception_handler(AzureError)
    async def storage_error(request: Request, exc: AzureError) -> JSONResponse:
        unavailable = storage_unavailable(exc)
        if unavailable is None:
            raise exc  # a bug, not an outage: the middleware logs it and answers 500
        log.warning("storage unavailable in %s %s: %s", request.method, request.url.path, exc)
        return await scheduler_error(request, unavailable)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        field = ".".join(str(part) for part in first.get("loc", ())[1:]) or "request"
        error = ValidationError(field, str(first.get("msg", "is invalid")))
        return JSONResponse(arm_body(error), status_code=http_status(error))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(exc.status_code, "BadRequest" if exc.status_code < 500 else "Error")
        message = f"No such route: {request.method} {request.url.path}"
        if exc.status_code != 404:
            message = str(exc.detail)
        return JSONResponse(
            {"error": {"code": code, "message": message}},
            status_code=exc.status_code,
            headers=getattr(exc, "headers", None),
        )


def _add_health(app: FastAPI) -> None:
    @app.get(
        PREFIX + "/health",
        tags=["Health"],
        summary="Storage reachability and the dispatcher's last tick (no key needed)",
    )
    async def health(request: Request) -> JSONResponse:
        context: ApiContext = request.app.state.context
        status, body = await run_in_threadpool(
            check_health, context.table_store, now=context.clock()
        )
        headers = {"Retry-After": str(HEALTH_RETRY_AFTER)} if status == 503 else None
        return JSONResponse(body, status_code=status, headers=headers)


def _add_versioned_documents(app: FastAPI) -> None:
    """Serve the OpenAPI document of each newer api-version beside FastAPI's own."""
    for version, path in DOCUMENT_PATHS.items():
        if version != DEFAULT_VERSION:
            app.add_api_route(path, _document_route(app, version), include_in_schema=False)


def _document_route(app: FastAPI, version: ApiVersion) -> Any:
    built: list[JSONObject] = []  # built once, like FastAPI's own document

    async def document() -> JSONResponse:
        if not built:
            app.openapi()  # builds the routes' document once (`_openapi`)
            built.append(versioned_document(app.state.every_route_document, version))
        return JSONResponse(built[0])

    document.__name__ = "openapi_" + version.value.replace("-", "_")
    return document


def _openapi(app: FastAPI) -> JSONObject:
    if app.openapi_schema is None:
        document = get_openapi(
            title=app.title, version=app.version, description=app.description, routes=app.routes
        )
        components = document.setdefault("components", {})
        components.setdefault("schemas", {}).update(schemas())
        components["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
        document["security"] = [{"bearer": []}]
        # Every route's document; FastAPI serves it as 2016-03-01 sees it (without the
        # routes of newer versions), the newer documents derive from the whole.
        app.state.every_route_document = without_framework_errors(document)
        app.openapi_schema = versioned_document(app.state.every_route_document, DEFAULT_VERSION)
    return app.openapi_schema
