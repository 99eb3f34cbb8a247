"""Routes of the job collection operations (JobCollections_* in the 2016-03-01 spec)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from scheduler_lib.api import collection_service as service
from scheduler_lib.api import paths
from scheduler_lib.api.context import ApiContext
from scheduler_lib.api.dependencies import CollectionPath, Ctx
from scheduler_lib.api.docs import body_doc, responses
from scheduler_lib.api.paging import page_body
from scheduler_lib.api.requests import empty_response, if_match, json_response, run_write
from scheduler_lib.model.collections import collection_to_wire

router = APIRouter(tags=["Job collections"])


@router.get(
    paths.COLLECTIONS_IN_SUBSCRIPTION,
    operation_id="JobCollections_ListBySubscription",
    summary="List the job collections of a subscription",
    responses=responses(200, schema="JobCollectionListResult"),
)
async def list_by_subscription(ctx: Ctx, subscriptionId: str) -> Response:
    records = await run_in_threadpool(service.list_collections, ctx, subscriptionId, None)
    return json_response(page_body([collection_to_wire(r, ctx.version) for r in records], None))


@router.get(
    paths.COLLECTIONS,
    operation_id="JobCollections_ListByResourceGroup",
    summary="List the job collections of a resource group",
    responses=responses(200, schema="JobCollectionListResult"),
)
async def list_by_resource_group(ctx: Ctx, subscriptionId: str, resourceGroupName: str) -> Response:
    records = await run_in_threadpool(
        service.list_collections, ctx, subscriptionId, resourceGroupName
    )
    return json_response(page_body([collection_to_wire(r, ctx.version) for r in records], None))


@router.get(
    paths.COLLECTION,
    operation_id="JobCollections_Get",
    summary="Get a job collection",
    responses=responses(200, 404, schema="JobCollectionDefinition"),
)
async def get(request: Request, ctx: Ctx, name: CollectionPath) -> Response:
    record = await run_in_threadpool(service.get_collection, ctx, name)
    return json_response(collection_to_wire(record, ctx.version), etag=record.etag)


@router.put(
    paths.COLLECTION,
    operation_id="JobCollections_CreateOrUpdate",
    summary="Create or replace a job collection",
    description="201 when created, 200 when replaced. `If-Match` makes it conditional.",
    responses=responses(200, 201, 400, 409, 412, schema="JobCollectionDefinition"),
    openapi_extra=body_doc("JobCollectionDefinition"),
)
async def create_or_update(request: Request, ctx: Ctx, name: CollectionPath) -> Response:
    (record, created), _ = await run_write(
        request, ctx, lambda body, etag, now: service.put_collection(ctx, name, body, etag, now)
    )
    return json_response(
        collection_to_wire(record, ctx.version), 201 if created else 200, etag=record.etag
    )


@router.patch(
    paths.COLLECTION,
    operation_id="JobCollections_Patch",
    summary="Change parts of a job collection",
    responses=responses(200, 400, 404, 409, 412, schema="JobCollectionDefinition"),
    openapi_extra=body_doc("JobCollectionDefinition"),
)
async def patch(request: Request, ctx: Ctx, name: CollectionPath) -> Response:
    record, _ = await run_write(
        request, ctx, lambda body, etag, now: service.patch_collection(ctx, name, body, etag, now)
    )
    return json_response(collection_to_wire(record, ctx.version), etag=record.etag)


@router.delete(
    paths.COLLECTION,
    operation_id="JobCollections_Delete",
    summary="Delete a job collection and all its jobs",
    description="Synchronous: answers 200 once everything is deleted.",
    responses=responses(200, 404, 412),
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
    paths.COLLECTION + "/enable",
    operation_id="JobCollections_Enable",
    summary="Enable a job collection (its jobs run again)",
    responses=responses(200, 404, 412),
)
async def enable(request: Request, ctx: Ctx, name: CollectionPath) -> Response:
    return await _set_state(request, ctx, name, "Enabled")


@router.post(
    paths.COLLECTION + "/disable",
    operation_id="JobCollections_Disable",
    summary="Disable a job collection (none of its jobs run until it is enabled)",
    responses=responses(200, 404, 412),
)
async def disable(request: Request, ctx: Ctx, name: CollectionPath) -> Response:
    return await _set_state(request, ctx, name, "Disabled")
