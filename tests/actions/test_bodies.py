"""What an action reads from its target is bounded: a redirect's body, a 2xx body and the
OAuth token endpoint's answer are read to at most a few KB, however large the target's
answer (tests/support/large_body_target.py counts what the target got to send)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from scheduler_lib.actions import ActionOutcome, run_action
from scheduler_lib.actions.oauth import TokenCache
from scheduler_lib.config import Settings
from tests.actions.test_http import CONTEXT
from tests.support.large_body_target import LargeBodyTarget

SIZE = 200 * 1024 * 1024
#: Well above what loopback socket buffers hold, well below SIZE.
READ_AT_MOST = 32 * 1024 * 1024


def run(action: dict[str, Any], settings: Settings | None = None, **adapters: Any) -> ActionOutcome:
    return run_action(action, CONTEXT, settings or Settings(), **adapters)


def written_when_done(target: LargeBodyTarget) -> int:
    assert target.done.wait(30), "the target never finished its answer"
    return target.bytes_written


@pytest.mark.parametrize(
    ("status", "headers"),
    [
        pytest.param(302, {"Location": "http://127.0.0.1:9/elsewhere"}, id="redirect"),
        pytest.param(200, {}, id="success"),
        pytest.param(500, {}, id="error"),
    ],
)
def test_a_large_answer_is_not_read(status: int, headers: dict[str, str]) -> None:
    with LargeBodyTarget(SIZE, status, headers) as target:
        outcome = run({"type": "Http", "request": {"uri": target.url + "/", "method": "GET"}})
        assert outcome.status_code == status
        assert outcome.succeeded is (status == 200)
        assert "Body: xxxx" in outcome.message and len(outcome.message) < 4096
        assert written_when_done(target) < READ_AT_MOST


def test_a_large_token_endpoint_answer_is_not_read() -> None:
    with LargeBodyTarget(SIZE, 200, {"Content-Type": "application/json"}) as target:
        settings = replace(Settings(), oauth_authority=target.url)
        auth = {
            "type": "ActiveDirectoryOAuth",
            "tenant": "t",
            "clientId": "c",
            "audience": "https://api.example",
            "secret": "oauth-secret",
        }
        action = {
            "type": "Http",
            "request": {"uri": "http://127.0.0.1:9/", "method": "GET", "authentication": auth},
        }
        outcome = run(action, settings, token_cache=TokenCache())
        assert not outcome.succeeded
        assert "more than 65536 bytes" in outcome.message, outcome.message
        assert written_when_done(target) < READ_AT_MOST
