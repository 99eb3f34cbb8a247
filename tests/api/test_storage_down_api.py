"""Storage unreachable, over real HTTP: the API answers 503 `ServiceUnavailable` with a
`Retry-After` within a few seconds, not a 500 after the storage SDK's retries (about 5 s for
a table read, 80 s for a queue send with its defaults).

Two ways storage goes away: an API whose storage endpoints point at a port where nothing
listens, and a dedicated Azurite stopped under a running API (its tables already created)."""

from __future__ import annotations

import time
from dataclasses import replace

import httpx
import pytest

from devtools.azurite import free_port, start_azurite
from scheduler_lib.api import create_app
from scheduler_lib.config import AZURITE_ACCOUNT, Settings
from scheduler_lib.runtime import Runtime
from tests.api.conftest import collection_path, job_body, job_path
from tests.support.api_server import serve

#: Generous against a loaded machine; the SDK's defaults take ~5 s for a refused table read.
PATIENCE = 3.0


def _dead_settings(settings: Settings) -> Settings:
    port = free_port()  # nothing listens there
    conn = ";".join(
        f"{part.split('=', 1)[0]}=http://127.0.0.1:{port}/{AZURITE_ACCOUNT}"
        if part.split("=", 1)[0].endswith("Endpoint")
        else part
        for part in settings.storage_connection_string.split(";")
    )
    return replace(settings, storage_connection_string=conn)


def _check_unavailable(response: httpx.Response, elapsed: float) -> None:
    assert response.status_code == 503, response.text
    assert int(response.headers["retry-after"]) > 0
    assert response.headers.get("x-ms-request-id")
    error = response.json()["error"]
    assert error["code"] == "ServiceUnavailable"
    assert "storage" in error["message"].lower()
    assert elapsed < PATIENCE, f"answered after {elapsed:.1f}s"


def _requests(http: httpx.Client) -> list[tuple[str, str, dict | None]]:
    return [
        ("GET", collection_path(), None),
        ("PUT", collection_path(), {"location": "westus", "properties": {}}),
        ("PUT", job_path(), job_body()),
        ("GET", f"{collection_path()}/jobs", None),
        ("DELETE", job_path(), None),
    ]


def _client(url: str) -> httpx.Client:
    return httpx.Client(
        base_url=url,
        headers={"Authorization": "Bearer test-key"},
        params={"api-version": "2016-03-01"},
        timeout=120,
    )


def test_storage_where_nothing_listens_is_a_quick_503(settings: Settings) -> None:
    app = Runtime(_dead_settings(settings)).api  # as function_app.py builds it
    with serve(app) as server, _client(server.api_url) as http:
        for method, path, body in _requests(http):
            started = time.monotonic()
            response = http.request(method, path, json=body)
            _check_unavailable(response, time.monotonic() - started)
        health = http.get("/health")
        assert health.status_code == 503
        assert int(health.headers["retry-after"]) > 0
        assert health.json()["status"] == "Unhealthy"
        assert health.json()["storage"]["reachable"] is False


@pytest.fixture
def own_azurite():
    server = start_azurite()
    try:
        yield server
    finally:
        server.stop()


def test_storage_stopped_under_a_running_api_is_a_quick_503(settings, own_azurite) -> None:
    settings = replace(settings, storage_connection_string=own_azurite.connection_string)
    with serve(create_app(settings)) as server, _client(server.api_url) as http:
        created = http.put(collection_path(), json={"location": "westus", "properties": {}})
        assert created.status_code == 201
        assert http.put(job_path(), json=job_body()).status_code == 201
        own_azurite.process.kill()
        own_azurite.process.wait()
        for method, path, body in _requests(http):
            started = time.monotonic()
            response = http.request(method, path, json=body)
            _check_unavailable(response, time.monotonic() - started)
