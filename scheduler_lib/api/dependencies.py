"""FastAPI dependencies every route shares: the API context, once the `api-version` has
been checked, and the resource names taken from the ARM path. Declared once here, they
keep each route's signature to what is particular to it, and FastAPI still documents
every path parameter in the OpenAPI page."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from scheduler_lib.api.docs import API_VERSION_QUERY
from scheduler_lib.api.requests import request_context
from scheduler_lib.service.collections import CollectionName
from scheduler_lib.service.context import ApiContext
from scheduler_lib.service.jobs import JobName


def _context(request: Request, api_version_query: API_VERSION_QUERY = None) -> ApiContext:
    """The app's context for this request, carrying the request's `api-version`."""
    return request_context(request)


def _collection(
    subscriptionId: str, resourceGroupName: str, jobCollectionName: str
) -> CollectionName:
    return CollectionName(subscriptionId, resourceGroupName, jobCollectionName)


def _job(
    subscriptionId: str, resourceGroupName: str, jobCollectionName: str, jobName: str
) -> JobName:
    return JobName(subscriptionId, resourceGroupName, jobCollectionName, jobName)


Ctx = Annotated[ApiContext, Depends(_context)]
CollectionPath = Annotated[CollectionName, Depends(_collection)]
JobPath = Annotated[JobName, Depends(_job)]
