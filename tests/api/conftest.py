"""An API server per test over the test's own Azurite tables, a clock the test controls,
and an authenticated HTTP client."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from scheduler_lib.config import Settings
from scheduler_lib.runtime import create_web_app
from scheduler_lib.store.tables import TableStore
from tests.support.api_server import ApiServer, ManualClock, serve

SUB = "00000000-0000-0000-0000-000000000001"
RG = "rg1"
COLLECTIONS = (
    f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler/jobCollections"
)


def collection_path(name: str = "coll") -> str:
    return f"{COLLECTIONS}/{name}"


def job_path(job: str = "job1", collection: str = "coll") -> str:
    return f"{collection_path(collection)}/jobs/{job}"


def http_action(**request: Any) -> dict[str, Any]:
    return {
        "type": "Http",
        "request": {"uri": "http://example.com/ping", "method": "GET", **request},
    }


def job_body(**properties: Any) -> dict[str, Any]:
    return {"properties": {"action": http_action(), **properties}}


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def server(settings: Settings, clock: ManualClock) -> Iterator[ApiServer]:
    with serve(create_web_app(settings, clock=clock)) as running:
        yield running


#: The api-version of the extensions (docs/extensions.md).
EXTENSIONS_VERSION = "2026-12-01"


def api_client(
    server: ApiServer, *, timeout: float = 30, version: str = "2016-03-01"
) -> httpx.Client:
    """An HTTP client of `server`'s API with the test key and the api-version (2016-03-01,
    or `EXTENSIONS_VERSION` for the extensions)."""
    return httpx.Client(
        base_url=server.api_url,
        headers={"Authorization": "Bearer test-key"},
        params={"api-version": version},
        timeout=timeout,
    )


@pytest.fixture
def client(server: ApiServer) -> Iterator[httpx.Client]:
    with api_client(server) as http:
        yield http


@pytest.fixture
def client_ext(server: ApiServer) -> Iterator[httpx.Client]:
    """A client of the same server speaking api-version 2026-12-01 (the extensions)."""
    with api_client(server, version=EXTENSIONS_VERSION) as http:
        yield http


@pytest.fixture
def store(settings: Settings) -> TableStore:
    """Direct access to the tables the API writes (to check what it stored)."""
    return TableStore(settings)


def make_collection(client: httpx.Client, name: str = "coll", **properties: Any) -> dict:
    response = client.put(
        collection_path(name), json={"location": "westus", "properties": properties}
    )
    assert response.status_code in (200, 201), response.text
    return response.json()


def arm_error(response: httpx.Response, status: int) -> dict[str, Any]:
    """The ARM error of a response, after checking its status and shape."""
    assert response.status_code == status, response.text
    assert response.headers.get("x-ms-request-id")
    error = response.json()["error"]
    assert set(error) <= {"code", "message", "target"} and error["code"] and error["message"]
    return error
