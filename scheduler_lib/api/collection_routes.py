"""Routes of the job collection operations (JobCollections_* in the 2016-03-01 spec)."""

from __future__ import annotations

from functools import partial

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from scheduler_lib.api import paths
from scheduler_lib.api.dependencies import CollectionPath, Ctx
from scheduler_lib.api.docs import operation
from scheduler_lib.api.requests import empty_response, if_match, json_response, run_write
from scheduler_lib.service import collections as service
from scheduler_lib.service.context import ApiContext
from scheduler_lib.wire import dialect
from scheduler_lib.wire.collections import collection_to_wire
from scheduler_lib.wire.signing import reveal

router = APIRouter(tags=["Job collections"])

_LIST = "JobCollectionListResult"
_DEFINITION = "JobCollectionDefinition"


@router.get(
    paths.COLLECTIONS_IN_SUBSCRIPTION,
    **operation(
        "JobCollections_ListBySubscription",
        "List the job collections of a subscription",
        (200,),
        _LIST,
    ),
)
async def list_by_subscription(ctx: Ctx, subscriptionId: str) -> Response:
    return await _listed(ctx, subscriptionId, None)


@router.get(
    paths.COLLECTIONS,
    **operation(
        "JobCollections_ListByResourceGroup",
        "List the job collections of a resource group",
        (200,),
        _LIST,
    ),
)
async def list_by_resource_group(ctx: Ctx, subscriptionId: str, resourceGroupName: str) -> Response:
    return await _listed(ctx, subscriptionId, resourceGroupName)


async def _listed(ctx: ApiContext, subscription: str, resource_group: str | None) -> Response:
    records = await run_in_threadpool(service.list_collections, ctx, subscription, resource_group)
    items = [collection_to_wire(r, ctx.version) for r in records]
    return json_response(dialect.list_body(items, None, ctx.version))


@router.get(
    paths.COLLECTION,
    **operation("JobCollections_Get", "Get a job collection", (200, 404), _DEFINITION),
)
async def get(request: Request, ctx: Ctx, name: CollectionPath) -> Response:
    record = await run_in_threadpool(service.get_collection, ctx, name)
    return json_response(collection_to_wire(record, ctx.version), etag=record.etag)


@router.put(
    paths.COLLECTION,
    **operation(
        "JobCollections_CreateOrUpdate",
        "Create or replace a job collection",
        (200, 201, 400, 409, 412),
        _DEFINITION,
        body=True,
        description="201 when created; when replaced, 201 in 2016-03-01 (as Azure Scheduler "
        "answered) and 200 in 2026-12-01. `If-Match` makes it conditional.",
    ),
)
async def create_or_update(request: Request, ctx: Ctx, name: CollectionPath) -> Response:
    write = partial(service.put_collection, ctx, name)
    (record, created, generated), _ = await run_write(request, ctx, write)
    body = reveal(collection_to_wire(record, ctx.version), generated)
    status = 201 if created else dialect.of(ctx.version).collection_replaced_status
    return json_response(body, status, etag=record.etag)


@router.patch(
    paths.COLLECTION,
    **operation(
        "JobCollections_Patch",
        "Change parts of a job collection",
        (200, 400, 404, 409, 412),
        _DEFINITION,
        body=True,
    ),
)
async def patch(request: Request, ctx: Ctx, name: CollectionPath) -> Response:
    write = partial(service.patch_collection, ctx, name)
    (record, generated), _ = await run_write(request, ctx, write)
    body = reveal(collection_to_wire(record, ctx.version), generated)
    return json_response(body, etag=record.etag)


@router.delete(
    paths.COLLECTION,
    **operation(
        "JobCollections_Delete",
        "Delete a job collection and all its jobs",
        (200, 404, 412),
        description="Synchronous: answers 200 once everything is deleted.",
    ),
)
async def delete(request: Request, ctx: Ctx, name: CollectionPath) -> Response:
    await run_in_threadpool(
        lambda: service.delete_collection(ctx, name, client_etag=if_match(request))
    )
    return empty_response(200)


async def _set_state(
    request: Request, ctx: ApiContext, name: service.CollectionName, state: str
) -> Response:
    now = ctx.clock()
    record = await run_in_threadpool(
        lambda: service.set_state(ctx, name, state, client_etag=if_match(request), now=now)
    )
    return empty_response(200, etag=record.etag)


@router.post(
    paths.ENABLE,
    **operation(
        "JobCollections_Enable", "Enable a job collection (its jobs run again)", (200, 404, 412)
    ),
)
async def enable(request: Request, ctx: Ctx, name: CollectionPath) -> Response:
    return await _set_state(request, ctx, name, "Enabled")


@router.post(
    paths.DISABLE,
    **operation(
        "JobCollections_Disable",
        "Disable a job collection (none of its jobs run until it is enabled)",
        (200, 404, 412),
    ),
)
async def disable(request: Request, ctx: Ctx, name: CollectionPath) -> Response:
    return await _set_state(request, ctx, name, "Disabled")
