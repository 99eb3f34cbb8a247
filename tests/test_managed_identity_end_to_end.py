"""Extension 7 end to end (api-version 2026-12-01): `authentication.type:
ManagedServiceIdentity` through the real API, dispatcher tick and executor, on one hand-moved
clock (`tests/test_end_to_end.py`'s `System`). The app's identity is azure-identity's real
`DefaultAzureCredential`, pointed at a LOCAL token endpoint by its App Service settings
(`IDENTITY_ENDPOINT`, `IDENTITY_HEADER`): a real HTTP server that issues tokens."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from scheduler_lib.actions.identity import app_credential
from scheduler_lib.actions.oauth import TokenCache
from tests import test_end_to_end as e2e
from tests.support.http_target import HttpTarget, RecordedRequest
from tests.test_end_to_end import COLLECTION, System

system, target = e2e.system, e2e.target
IDENTITY_HEADER = "local-identity-header"


class Issuer:
    """A token endpoint in App Service's managed identity protocol (api-version 2019-08-01)."""

    def __init__(self, server: HttpTarget, lifetime: float = 3600) -> None:
        self.server = server
        self.lifetime = lifetime
        server.reply(200, self._token, headers={"Content-Type": "application/json"})

    def _token(self, request: RecordedRequest) -> str:
        resource = parse_qs(urlsplit(request.path).query)["resource"][0]
        number = len(self.server.requests)
        return json.dumps({
            "access_token": f"token-{number}-for-{resource}",
            "expires_on": str(int(time.time() + self.lifetime)),
            "resource": resource, "token_type": "Bearer",
        })  # fmt: skip


@pytest.fixture
def issuer(monkeypatch: pytest.MonkeyPatch) -> Iterator[Issuer]:
    with HttpTarget() as server:
        monkeypatch.setenv("IDENTITY_ENDPOINT", server.url_for("/msi/token"))
        monkeypatch.setenv("IDENTITY_HEADER", IDENTITY_HEADER)
        app_credential.cache_clear()  # the credential reads its settings when built
        yield Issuer(server)
    app_credential.cache_clear()


def job(uri: str, audience: Any = "api://orders") -> dict[str, Any]:
    return {"properties": {
        "startTime": "2026-03-04T09:10:00Z", "recurrence": {"frequency": "Hour"},
        "action": {"type": "Http", "request": {
            "uri": uri, "method": "GET",
            "authentication": {"type": "ManagedServiceIdentity", "audience": audience},
        }},
    }}  # fmt: skip


def put(running: System, name: str, body: dict[str, Any], version: str = "2026-12-01") -> Any:
    return running.client.put(
        f"{COLLECTION}/jobs/{name}", json=body, params={"api-version": version}
    )


def run_hours(running: System, hours: int) -> None:
    for hour in range(hours):
        running.clock.now = e2e.T0 + timedelta(minutes=10, hours=hour)
        running.tick_and_execute()


def test_the_target_receives_the_apps_token_for_its_audience_cached_until_near_expiry(
    system: System, target: HttpTarget, issuer: Issuer
) -> None:
    system.adapters["token_cache"] = TokenCache()
    response = put(system, "Orders", job(target.url, "api://orders"))
    assert response.status_code == 201, response.text
    auth = response.json()["properties"]["action"]["request"]["authentication"]
    assert auth == {"type": "ManagedServiceIdentity", "audience": "api://orders"}

    run_hours(system, 2)

    [asked] = issuer.server.requests  # the second run used the cached token
    assert asked.header("X-IDENTITY-HEADER") == IDENTITY_HEADER
    assert parse_qs(urlsplit(asked.path).query)["resource"] == ["api://orders"]
    assert [r.header("Authorization") for r in target.requests] == [
        "Bearer token-1-for-api://orders"] * 2  # fmt: skip
    for entry in system.get(f"{COLLECTION}/jobs/Orders/history")["value"]:
        assert "token-1" not in entry["properties"]["message"]


def test_a_token_near_expiry_is_asked_for_again(
    system: System, target: HttpTarget, issuer: Issuer
) -> None:
    issuer.lifetime = 120  # within the cache's 5-minute refresh margin
    system.adapters["token_cache"] = TokenCache()
    assert put(system, "Short", job(target.url, "api://short")).status_code == 201

    run_hours(system, 2)

    assert len(issuer.server.requests) == 2
    assert [r.header("Authorization") for r in target.requests] == [
        "Bearer token-1-for-api://short", "Bearer token-2-for-api://short"]  # fmt: skip


def test_no_token_is_asked_for_or_sent_to_a_refused_target(
    system: System, issuer: Issuer
) -> None:
    """The egress policy still applies: the metadata address is refused before any token."""
    system.adapters["token_cache"] = TokenCache()
    uri = "http://169.254.169.254/metadata/instance"
    response = put(system, "Imds", job(uri))
    if response.status_code == 201:  # refused at run time, if not already at PUT
        run_hours(system, 1)
        [entry] = system.get(f"{COLLECTION}/jobs/Imds/history")["value"]
        assert "refused by the egress policy" in entry["properties"]["message"]
    else:
        assert response.json()["error"]["target"] == "properties.action.request.uri"
    assert issuer.server.requests == []


def test_an_identity_failure_is_a_failed_attempt_saying_why(
    system: System, target: HttpTarget, issuer: Issuer
) -> None:
    issuer.server.reply(400, "no identity assigned", path="/msi/token")
    system.adapters["token_cache"] = TokenCache()
    body = job(target.url, "api://down")
    body["properties"]["action"]["retryPolicy"] = {"retryType": "None"}
    assert put(system, "Down", body).status_code == 201

    run_hours(system, 1)

    assert target.requests == []
    [entry] = system.get(f"{COLLECTION}/jobs/Down/history")["value"]
    assert entry["properties"]["status"] == "Failed"
    assert "managed identity token for audience 'api://down'" in entry["properties"]["message"]


@pytest.mark.parametrize(("audience", "field"), [
    (None, "properties.action.request.authentication.audience"),
    ("orders", "properties.action.request.authentication.audience"),
    ("api://orders/.default", "properties.action.request.authentication.audience"),
    (12, "properties.action.request.authentication.audience"),
])  # fmt: skip
def test_a_bad_audience_is_refused_naming_it(
    system: System, audience: Any, field: str
) -> None:
    body = job("https://example.com/", audience)
    if audience is None:
        del body["properties"]["action"]["request"]["authentication"]["audience"]
    response = put(system, "Bad", body)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["target"] == field


def test_an_application_id_is_an_audience(system: System) -> None:
    app_id = "3f6c2a1e-0000-4000-8000-00000000abcd"
    assert put(system, "AppId", job("https://example.com/", app_id)).status_code == 201


def test_2016_refuses_the_type_and_shows_a_stored_one_as_oauth(system: System) -> None:
    refused = put(system, "Old", job("https://example.com/"), "2016-03-01")
    assert refused.status_code == 400
    assert refused.json()["error"]["target"] == "properties.action.request.authentication.type"

    assert put(system, "Msi", job("https://example.com/")).status_code == 201
    old = system.get(f"{COLLECTION}/jobs/Msi")["properties"]["action"]["request"]
    assert old["authentication"] == {"type": "ActiveDirectoryOAuth", "audience": "api://orders"}
    # A 2016-03-01 PATCH leaves the stored identity alone.
    patched = system.client.patch(
        f"{COLLECTION}/jobs/Msi", json={"properties": {"state": "Disabled"}}
    )
    assert patched.status_code == 200, patched.text
    new = system.client.get(f"{COLLECTION}/jobs/Msi", params={"api-version": "2026-12-01"})
    assert new.json()["properties"]["action"]["request"]["authentication"]["type"] == (
        "ManagedServiceIdentity"
    )
