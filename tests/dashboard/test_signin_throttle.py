"""Wrong keys pasted into the sign-in form share the API's limit per client address (they
guess the same keys): after 10 in a minute the form answers 429 with `Retry-After` until
the minute is over. Real HTTP against the real app; the app's clock is moved, nobody sleeps."""

from __future__ import annotations

import logging
from datetime import timedelta

import httpx

from tests.api.conftest import COLLECTIONS, api_client
from tests.dashboard.conftest import browser, sign_in

LIMIT = 10  # docs/deploy.md
WRONG = "not-the-key"


def _wrong(client: httpx.Client) -> httpx.Response:
    return sign_in(client, WRONG)


def test_wrong_sign_ins_are_answered_429_after_the_limit(server, clock, caplog) -> None:
    caplog.set_level(logging.INFO)
    with browser(server) as client:
        for _ in range(LIMIT):
            assert _wrong(client).status_code == 401
        throttled = _wrong(client)
        assert throttled.status_code == 429 and "set-cookie" not in throttled.headers
        assert 1 <= int(throttled.headers["Retry-After"]) <= 60
        assert "Content-Security-Policy" in throttled.headers  # still a dashboard page
        # Never signed in from here: the right key waits too (no oracle).
        assert sign_in(client).status_code == 429
        clock.advance(timedelta(minutes=1))
        assert _wrong(client).status_code == 401
        assert sign_in(client).status_code == 303
    assert WRONG not in caplog.text


def test_wrong_api_keys_count_against_sign_in(server) -> None:
    with api_client(server) as api:
        for _ in range(LIMIT):
            answer = api.get(COLLECTIONS, headers={"Authorization": "Bearer wrong"})
            assert answer.status_code == 401
    with browser(server) as client:
        assert _wrong(client).status_code == 429


def test_a_signed_in_address_signs_in_again_while_throttled(server) -> None:
    with browser(server) as user:
        assert sign_in(user).status_code == 303
    with browser(server) as guesser:  # same address
        for _ in range(LIMIT):
            _wrong(guesser)
        assert _wrong(guesser).status_code == 429
    with browser(server) as user:
        assert sign_in(user).status_code == 303
