"""A job moved to another host does not take its stored OAuth secret along, end to end: the
real API, dispatcher tick and executor over Azurite on one hand-moved clock
(`tests/test_end_to_end.py`'s `System`), two real local targets on two loopback hosts
(127.0.0.1 and 127.0.0.2) and a real local token endpoint as the Entra ID authority.

Before the fix a URI-only PATCH answered 200 and the next run sent `Bearer <token minted with
the stored secret>` to the new host."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from scheduler_lib.actions.oauth import TokenCache
from scheduler_lib.config import Settings
from tests import test_end_to_end as e2e
from tests.support.http_target import HttpTarget, RecordedRequest
from tests.test_end_to_end import COLLECTION, System

system, target = e2e.system, e2e.target
TENANT = "contoso.onmicrosoft.com"
JOB = f"{COLLECTION}/jobs/Close-Day"


@pytest.fixture
def authority() -> Iterator[HttpTarget]:
    """A token endpoint: each token names the client secret it was minted with."""

    def token(request: RecordedRequest) -> str:
        secret = request.form()["client_secret"]
        return json.dumps({"token_type": "Bearer", "expires_in": "3599",
                           "access_token": f"token-of-{secret}"})  # fmt: skip

    with HttpTarget() as server:
        server.reply(200, token, {"Content-Type": "application/json"})
        yield server


@pytest.fixture
def settings(settings: Settings, authority: HttpTarget) -> Settings:
    return replace(settings, oauth_authority=authority.url)


@pytest.fixture
def other_host() -> Iterator[HttpTarget]:
    with HttpTarget(host="127.0.0.2") as server:
        yield server


def patch(running: System, request: dict[str, Any]) -> Any:
    return running.client.patch(JOB, json={"properties": {"action": {"request": request}}})


def test_an_oauth_secret_does_not_follow_the_uri_to_another_host(
    system: System, target: HttpTarget, other_host: HttpTarget
) -> None:
    system.adapters["token_cache"] = TokenCache()
    system.put(JOB, {"properties": {
        "startTime": "2026-03-04T09:10:00Z", "recurrence": {"frequency": "Hour"},
        "action": {"type": "Http", "retryPolicy": {"retryType": "None"}, "request": {
            "uri": target.url_for("/close-day"), "method": "POST",
            "authentication": {"type": "ActiveDirectoryOAuth", "tenant": TENANT,
                               "audience": "api://orders", "clientId": "app-1",
                               "secret": "stored-secret"},
        }},
    }})  # fmt: skip

    moved = patch(system, {"uri": other_host.url_for("/close-day")})
    assert moved.status_code == 400, moved.text
    assert moved.json()["error"]["target"] == "properties.action.request.authentication.secret"
    same_host = patch(system, {"uri": target.url_for("/close-day/v2")})
    assert same_host.status_code == 200, same_host.text

    system.clock.now = e2e.T0 + timedelta(minutes=10)
    system.tick_and_execute()
    assert other_host.requests == []
    [sent] = target.requests
    assert (sent.path, sent.header("Authorization")) == (
        "/close-day/v2",
        "Bearer token-of-stored-secret",
    )

    # With the secret given again the job moves, and the new host gets a token of that one.
    resent = patch(system, {"uri": other_host.url_for("/close-day"),
                            "authentication": {"secret": "new-secret"}})  # fmt: skip
    assert resent.status_code == 200, resent.text
    system.clock.now = e2e.T0 + timedelta(hours=1, minutes=10)
    system.tick_and_execute()
    assert [r.header("Authorization") for r in other_host.requests] == [
        "Bearer token-of-new-secret"]  # fmt: skip
    assert len(target.requests) == 1
