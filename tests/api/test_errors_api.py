"""Authentication and every bad-input path: ARM error bodies, 4xx never 5xx, the field
named, a request id on every response."""

from datetime import timedelta

import httpx
import pytest

from tests.api.conftest import (
    COLLECTIONS,
    SUB,
    arm_error,
    collection_path,
    job_body,
    job_path,
    make_collection,
)

ROUTES = [
    ("GET", f"/subscriptions/{SUB}/providers/Microsoft.Scheduler/jobCollections"),
    ("GET", COLLECTIONS),
    ("GET", collection_path()),
    ("PUT", collection_path()),
    ("PATCH", collection_path()),
    ("DELETE", collection_path()),
    ("POST", collection_path() + "/enable"),
    ("POST", collection_path() + "/disable"),
    ("GET", job_path()),
    ("PUT", job_path()),
    ("PATCH", job_path()),
    ("DELETE", job_path()),
    ("POST", job_path() + "/run"),
    ("GET", job_path().rsplit("/", 1)[0]),
    ("GET", job_path() + "/history"),
    ("POST", "/preview"),
    ("GET", "/no/such/route"),
]


@pytest.mark.parametrize(
    "authorization",
    [
        pytest.param(None, id="no-header"),
        pytest.param("Bearer wrong-key", id="wrong-key"),
        pytest.param("Basic test-key", id="wrong-scheme"),
        pytest.param("Bearer", id="no-token"),
        pytest.param("Bearer test-key-and-more", id="key-prefix"),
    ],
)
def test_every_route_needs_a_valid_key(server, clock, authorization):
    headers = {"Authorization": authorization} if authorization else {}
    with httpx.Client(base_url=server.api_url, headers=headers) as anonymous:
        for method, path in ROUTES:
            response = anonymous.request(method, path, json={})
            error = arm_error(response, 401)
            assert error["code"] == "AuthenticationFailed", (method, path)
            assert response.headers["www-authenticate"] == "Bearer"
            # A minute between requests: more than 10 wrong keys a minute would be a 429
            # (test_auth_throttle_api.py).
            clock.advance(timedelta(minutes=1))


@pytest.mark.parametrize("path", ["/openapi.json", "/docs"], ids=["openapi-json", "docs-page"])
def test_documentation_needs_no_key(server, path):
    response = httpx.get(server.api_url + path)
    assert response.status_code == 200
    assert "jobCollections" in response.text or "swagger" in response.text.lower()


def test_health_needs_no_key(server):
    response = httpx.get(server.api_url + "/health")
    assert response.status_code == 200
    assert response.json()["storage"] == {"reachable": True}
    assert response.headers["x-ms-request-id"]


def test_any_configured_key_works(settings, clock):
    from dataclasses import replace

    from scheduler_lib.api import create_app
    from tests.support.api_server import serve

    two_keys = replace(settings, api_keys=("key-one", "key-two"))
    with serve(create_app(two_keys, clock=clock)) as running:
        for key in ("key-one", "key-two"):
            response = httpx.get(
                running.api_url + COLLECTIONS, headers={"Authorization": f"Bearer {key}"}
            )
            assert response.status_code == 200


def test_success_responses_carry_request_ids_and_echo_client_ids(client):
    response = client.get(COLLECTIONS, headers={"x-ms-client-request-id": "abc-123"})
    assert response.status_code == 200
    assert response.headers["x-ms-request-id"]
    assert response.headers["x-ms-client-request-id"] == "abc-123"
    assert client.get(COLLECTIONS).headers["x-ms-request-id"] != response.headers["x-ms-request-id"]


@pytest.mark.parametrize(
    ("content", "target"),
    [
        pytest.param(b"{not json", "body", id="malformed"),
        pytest.param(b"", "body", id="empty"),
        pytest.param(b"[1, 2]", "body", id="not-an-object"),
        pytest.param(b"\xff\xfe{}", "body", id="not-utf8"),
        pytest.param(b'{"properties": NaN}', "body", id="nan"),
        pytest.param(b"[" * 100000 + b"]" * 100000, "body", id="oversized"),
        pytest.param(b'{"properties": {"action": 5}}', "properties.action", id="action-not-object"),
        pytest.param(
            b'{"properties": {"Action": {"type": "Http"}}}',
            "properties.action.request",
            id="request-missing",
        ),
        pytest.param(
            b'{"properties": {"action": {"type": "Http", "request": {"uri": "http://x.y",'
            b' "method": "GET"}}, "startTime": 20260101}}',
            "properties.startTime",
            id="start-time-number",
        ),
        pytest.param(
            b'{"properties": {"action": {"type": "Http", "request": {"uri": "http://x.y",'
            b' "method": "GET"}}, "recurrence": {"frequency": "Day", "interval": "2"}}}',
            "properties.recurrence.interval",
            id="interval-string",
        ),
        pytest.param(b'{"properties": {}, "etag": "x"}', "etag", id="unknown-top-level"),
        pytest.param(
            b'{"properties": {"action": {"type": "Http", "request": {"uri": "http://x.y",'
            b' "method": "GET"}}, "retryPolicy": {}}}',
            "properties.retryPolicy",
            id="misplaced-property",
        ),
        pytest.param(
            '{"properties": {"action": {"type": "Http", "request": {"uri": "http://x.y",'
            ' "method": "GET", "headers": {"X-Price": "5 €"}}}}}'.encode(),
            "properties.action.request.headers.X-Price",
            id="header-not-latin1",
        ),
        pytest.param(
            b'{"properties": {"action": {"type": "Http", "request": {"uri": "http://x.y",'
            b' "method": "GET"}, "errorAction": {"type": "Http", "request": {"uri": "http://x.y",'
            b' "method": "GET", "headers": {"X-A": "1\\r\\nX-B: 2"}}}}}}',
            "properties.action.errorAction.request.headers.X-A",
            id="error-action-header-crlf",
        ),
    ],
)
def test_bad_job_bodies_are_400_naming_the_field(client, content, target):
    make_collection(client)
    response = client.put(job_path(), content=content, headers={"Content-Type": "application/json"})
    assert arm_error(response, 400)["target"] == target


def test_a_job_over_16_kb_is_400(client):
    make_collection(client)
    body = job_body(
        action={
            "type": "Http",
            "request": {
                "uri": "http://x.y",
                "method": "POST",
                "body": "x" * 8000,
                "headers": {f"h{i}": "v" * 500 for i in range(20)},
            },
        }
    )
    error = arm_error(client.put(job_path(), json=body), 400)
    assert error["target"] == "properties" and "16384" in error["message"]


@pytest.mark.parametrize(
    ("path", "target"),
    [
        pytest.param(job_path("bad name"), "jobName", id="space-in-job"),
        pytest.param(job_path("x" * 65), "jobName", id="job-too-long"),
        pytest.param(job_path("j", collection="c|d"), "jobCollectionName", id="pipe-in-collection"),
        pytest.param(collection_path("coll'"), "jobCollectionName", id="quote-in-collection"),
        pytest.param(collection_path().replace(SUB, "s%20b"), "subscriptionId", id="bad-sub"),
    ],
)
def test_bad_names_are_400(client, path, target):
    body = job_body() if "/jobs/" in path else {"properties": {}}
    assert arm_error(client.put(path, json=body), 400)["target"] == target


def test_wrong_api_version_unknown_route_and_method(client):
    make_collection(client)
    wrong = client.get(collection_path(), params={"api-version": "2014-08-01-preview"})
    assert arm_error(wrong, 400)["target"] == "api-version"
    assert (
        httpx.get(
            client.base_url.join("/api" + collection_path()).copy_with(params=None),
            headers={"Authorization": "Bearer test-key"},
        ).status_code
        == 200
    )  # no api-version at all: accepted
    assert arm_error(client.get("/subscriptions"), 404)["code"] == "NotFound"
    assert arm_error(client.request("PATCH", COLLECTIONS), 405)["code"] == "MethodNotAllowed"


def test_collection_body_errors(client):
    error = arm_error(client.put(collection_path(), json={"location": 5}), 400)
    assert error["target"] == "location"
    error = arm_error(client.put(collection_path(), json={"properties": {"sku": "Free"}}), 400)
    assert error["target"] == "properties.sku"
