"""A job's request headers over the API: what the HTTP client writes itself (Host, framing,
hop-by-hop fields) is refused at PUT and PATCH, naming the header. Real HTTP requests to an
API over the test's Azurite tables."""

from __future__ import annotations

import httpx
import pytest

from tests.api.conftest import arm_error, http_action, job_body, job_path, make_collection


@pytest.mark.parametrize(
    "name",
    [
        "Host",
        "transfer-encoding",
        "Content-Length",
        "CONNECTION",
        "Keep-Alive",
        "Proxy-Connection",
        "TE",
        "Trailer",
        "Upgrade",
        "Proxy-Authorization",
    ],
)
def test_client_headers_are_refused_at_put_and_patch(client: httpx.Client, name: str) -> None:
    make_collection(client)
    field = f"properties.action.request.headers.{name}"
    bad = http_action(headers={"X-Ok": "1", name: "internal.example"})
    error = arm_error(client.put(job_path(), json=job_body(action=bad)), 400)
    assert error["target"] == field
    error_action = {**http_action(), "errorAction": bad}
    error = arm_error(client.put(job_path(), json=job_body(action=error_action)), 400)
    assert error["target"] == f"properties.action.errorAction.request.headers.{name}"

    assert client.put(job_path(), json=job_body()).status_code == 201
    patch = {"properties": {"action": {"request": {"headers": {name: "x"}}}}}
    error = arm_error(client.patch(job_path(), json=patch), 400)
    assert error["target"] == field
    patch = {"properties": {"action": {"errorAction": bad}}}
    error = arm_error(client.patch(job_path(), json=patch), 400)
    assert error["target"] == f"properties.action.errorAction.request.headers.{name}"
    stored = client.get(job_path()).json()["properties"]["action"]
    assert "headers" not in stored["request"] and "errorAction" not in stored
