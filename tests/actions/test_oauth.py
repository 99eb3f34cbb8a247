"""ActiveDirectoryOAuth: the local HTTP server plays both the token endpoint and the target."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from devtools.azurite import free_port
from scheduler_lib.actions import ActionOutcome, ExecutionContext, run_action
from scheduler_lib.actions.oauth import TokenCache
from scheduler_lib.config import Settings
from tests.support.http_target import HttpTarget, RecordedRequest

CONTEXT = ExecutionContext("job", "collection", datetime(2024, 3, 1, tzinfo=UTC), "tag")
SECRET = "s3cr3t+/=value&42 é"
TOKEN_PATH = "/contoso.onmicrosoft.com/oauth2/token"


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def target() -> Iterator[HttpTarget]:
    with HttpTarget() as server:
        yield server


def token_reply(token: str, expires_in: int | str = "3599") -> str:
    return json.dumps({"token_type": "Bearer", "expires_in": expires_in, "access_token": token})


def oauth_action(target: HttpTarget, secret: str = SECRET) -> dict[str, Any]:
    return {
        "type": "Https",
        "request": {
            "uri": target.url_for("/api/run"),
            "method": "POST",
            "authentication": {
                "type": "ActiveDirectoryOAuth",
                "tenant": "contoso.onmicrosoft.com",
                "audience": "https://management.core.windows.net/",
                "clientId": "11111111-2222-3333-4444-555555555555",
                "secret": secret,
            },
        },
    }


def run(
    target: HttpTarget,
    cache: TokenCache,
    action: dict[str, Any] | None = None,
    authority: str | None = None,
) -> ActionOutcome:
    settings = Settings(oauth_authority=authority or target.url)
    return run_action(action or oauth_action(target), CONTEXT, settings, token_cache=cache)


def bearer(request: RecordedRequest) -> str | None:
    return request.header("Authorization")


def test_client_credentials_token_is_fetched_and_sent(target: HttpTarget) -> None:
    target.reply(
        200, token_reply("token-one"), {"Content-Type": "application/json"}, path=TOKEN_PATH
    )
    outcome = run(target, TokenCache())
    assert outcome.succeeded, outcome.message
    [token_request] = target.requests_to(TOKEN_PATH)
    assert token_request.method == "POST"
    assert token_request.form() == {
        "grant_type": "client_credentials",
        "client_id": "11111111-2222-3333-4444-555555555555",
        "client_secret": SECRET,
        "resource": "https://management.core.windows.net/",  # v1 endpoint: resource, no scope
    }
    [api_request] = target.requests_to("/api/run")
    assert bearer(api_request) == "Bearer token-one"


def test_token_is_cached_until_shortly_before_expiry(target: HttpTarget) -> None:
    target.reply(200, token_reply("token-one", 3600), path=TOKEN_PATH, times=1)
    target.reply(200, token_reply("token-two", 3600), path=TOKEN_PATH)
    clock = FakeClock()
    cache = TokenCache(clock=clock, refresh_margin=300)
    run(target, cache)
    clock.now += 3299  # 301 s left: still good
    run(target, cache)
    clock.now += 1  # 300 s left: refresh
    run(target, cache)
    assert len(target.requests_to(TOKEN_PATH)) == 2
    tokens = [bearer(r) for r in target.requests_to("/api/run")]
    assert tokens == ["Bearer token-one", "Bearer token-one", "Bearer token-two"]


def test_a_different_secret_does_not_reuse_a_cached_token(target: HttpTarget) -> None:
    target.reply(200, token_reply("token-one"), path=TOKEN_PATH, times=1)
    target.reply(401, '{"error": "invalid_client"}', path=TOKEN_PATH)
    cache = TokenCache()
    assert run(target, cache).succeeded
    outcome = run(target, cache, oauth_action(target, secret="wrong-secret-value"))
    assert not outcome.succeeded
    assert outcome.status_code == 401
    assert len(target.requests_to("/api/run")) == 1


def test_token_without_lifetime_is_used_once(target: HttpTarget) -> None:
    target.reply(200, json.dumps({"access_token": "once"}), path=TOKEN_PATH)
    cache = TokenCache()
    run(target, cache)
    run(target, cache)
    assert len(target.requests_to(TOKEN_PATH)) == 2


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        pytest.param(
            401,
            '{"error":"invalid_client","error_description":"AADSTS7000215: Invalid client '
            'secret provided."}',
            "Could not get an access token from ",
            id="401-invalid-client",
        ),
        pytest.param(400, '{"error":"invalid_resource"}', "'400' Body: ", id="400-bad-resource"),
        pytest.param(200, "<html>not json</html>", "without an access_token", id="200-not-json"),
        pytest.param(200, '{"token_type":"Bearer"}', "without an access_token", id="200-no-token"),
    ],
)
def test_token_endpoint_refusal_is_a_failed_outcome(
    target: HttpTarget, status: int, body: str, expected: str
) -> None:
    target.reply(status, body, path=TOKEN_PATH)
    outcome = run(target, TokenCache())
    assert not outcome.succeeded
    assert outcome.message.startswith("Http Action - ")
    assert expected in outcome.message
    assert outcome.status_code == (status if status != 200 else None)
    assert target.requests_to("/api/run") == []


def test_unreachable_token_endpoint_is_a_failed_outcome(target: HttpTarget) -> None:
    outcome = run(target, TokenCache(), authority=f"http://127.0.0.1:{free_port()}")
    assert not outcome.succeeded
    assert "Could not get an access token" in outcome.message
    assert "Connection refused" in outcome.message


def test_secret_and_token_never_reach_the_message(target: HttpTarget) -> None:
    """Both endpoints echo what they received: the form with the secret, the bearer token."""
    target.reply(400, lambda r: f"you sent {r.text}", path=TOKEN_PATH, times=1)
    target.reply(200, token_reply("token-abcdefghijklmnop"), path=TOKEN_PATH)
    target.reply(500, lambda r: f"you sent {bearer(r)}", path="/api/run")
    cache = TokenCache()
    refused = run(target, cache)
    assert "client_id=" in refused.message and "resource=" in refused.message
    assert SECRET not in refused.message
    failed = run(target, cache)
    assert failed.message.endswith("you sent Bearer ***")
    assert "token-abcdefghijklmnop" not in failed.message
