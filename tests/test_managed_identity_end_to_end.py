"""Extension 7 end to end (api-version 2026-12-01): `authentication.type:
ManagedServiceIdentity` through the real API, dispatcher tick and executor, on one hand-moved
clock (`tests/test_end_to_end.py`'s `System`). The app's identity is azure-identity's real
`DefaultAzureCredential`, pointed at a LOCAL token endpoint by its App Service settings
(`IDENTITY_ENDPOINT`, `IDENTITY_HEADER`): a real HTTP server that issues tokens.

The operator opened the audiences these tests use (`SCHEDULER_IDENTITY_AUDIENCES`, closed by
default: tests/api/test_identity_audiences_api.py), each towards the hosts it names."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from scheduler_lib.actions.identity import app_credential
from scheduler_lib.actions.oauth import TokenCache
from scheduler_lib.config import Settings
from scheduler_lib.identity_audiences import NO_AUDIENCES, IdentityAudiences
from scheduler_lib.runtime import Runtime
from tests import test_end_to_end as e2e
from tests.support.http_target import HttpTarget, RecordedRequest
from tests.test_end_to_end import COLLECTION, System

system, target = e2e.system, e2e.target
IDENTITY_HEADER = "local-identity-header"
APP_ID = "3f6c2a1e-0000-4000-8000-00000000abcd"
#: The local target listens on 127.0.0.1; example.com stands for a host never connected to.
AUDIENCES = (
    "api://orders=127.0.0.1,example.com;api://short=127.0.0.1;api://down=127.0.0.1;"
    f"{APP_ID}=example.com"
)


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The suite's settings with the audiences above opened by the operator."""
    return replace(settings, identity_audiences=IdentityAudiences.parse(AUDIENCES))


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


def test_no_token_is_asked_for_or_sent_to_a_refused_target(system: System, issuer: Issuer) -> None:
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
def test_a_bad_audience_is_refused_naming_it(system: System, audience: Any, field: str) -> None:
    body = job("https://example.com/", audience)
    if audience is None:
        del body["properties"]["action"]["request"]["authentication"]["audience"]
    response = put(system, "Bad", body)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["target"] == field


def test_an_application_id_is_an_audience(system: System) -> None:
    assert put(system, "AppId", job("https://example.com/", APP_ID)).status_code == 201


@pytest.mark.parametrize(
    "audience",
    ["https://storage.azure.com", "https://management.azure.com", "https://vault.azure.net"],
)
def test_the_apps_own_resources_tokens_never_reach_a_callers_host(
    system: System, target: HttpTarget, issuer: Issuer, audience: str
) -> None:
    """The attack: any API key holder asks for a token of the app's storage, management plane
    or vault and points the job at a host of their own (the local target). Before: 201, and
    the token arrived there. Not listed in SCHEDULER_IDENTITY_AUDIENCES: 400, nothing sent."""
    system.adapters["token_cache"] = TokenCache()
    response = put(system, "Steal", job(target.url_for("/collect"), audience))
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["target"] == "properties.action.request.authentication.audience"
    assert "SCHEDULER_IDENTITY_AUDIENCES" in error["message"]

    run_hours(system, 1)

    assert issuer.server.requests == []
    assert target.requests == []


def closed_runtime(running: System, audiences: IdentityAudiences) -> Runtime:
    """The same tables, queue and clock, under settings the operator has changed since."""
    changed = replace(running.settings, identity_audiences=audiences)
    clock = running.clock
    return Runtime(changed, clock=clock, sleep=clock.sleep, action_adapters=running.adapters)


@pytest.mark.parametrize("audiences", [
    pytest.param(NO_AUDIENCES, id="setting-emptied"),
    pytest.param(IdentityAudiences.parse("api://orders=orders.example.com"), id="host-removed"),
    pytest.param(IdentityAudiences.parse("api://billing=127.0.0.1"), id="audience-removed"),
])  # fmt: skip
def test_a_stored_job_no_longer_allowed_fails_at_run_time_without_a_token(
    system: System, target: HttpTarget, issuer: Issuer, audiences: IdentityAudiences
) -> None:
    """Stored while the operator allowed it; the setting changed before it ran. Before the
    run-time check the token was minted and sent: now the attempt fails saying why, and
    neither the token endpoint nor the target hears of it."""
    system.adapters["token_cache"] = TokenCache()
    body = job(target.url_for("/orders"), "api://orders")
    body["properties"]["action"]["retryPolicy"] = {"retryType": "None"}
    assert put(system, "Stored", body).status_code == 201
    system.runtime = closed_runtime(system, audiences)

    run_hours(system, 1)

    assert issuer.server.requests == []
    assert target.requests == []
    [entry] = system.get(f"{COLLECTION}/jobs/Stored/history")["value"]
    assert entry["properties"]["status"] == "Failed"
    message = entry["properties"]["message"]
    assert "SCHEDULER_IDENTITY_AUDIENCES" in message and "api://orders" in message
    assert "token-" not in message


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
