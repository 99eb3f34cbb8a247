"""Wrong API keys are limited per client address: after 10 in a minute the address is
answered 429 with `Retry-After` (logged once, without the key) until the minute is over.
An address a valid key came from keeps working with that key; one that never sent a valid
key is refused whatever it sends, so the 429 says nothing about the key. Real HTTP against
the real app; time moves on the app's injected clock, nobody sleeps.

The client address is the socket peer (here always 127.0.0.1); the forwarded client address
counts only from a trusted proxy (`SCHEDULER_TRUSTED_PROXIES`), which the tests that need
several clients name."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import timedelta

import httpx
import pytest

from scheduler_lib.api import create_app
from tests.api.conftest import COLLECTIONS, arm_error
from tests.support.api_server import ApiServer, serve

#: The documented limit (docs/deploy.md): failed authentications per address and window.
LIMIT = 10
WINDOW = timedelta(minutes=1)
WRONG = "Bearer not-the-key"
VALID = "Bearer test-key"


def _get(server: ApiServer, authorization: str, **headers: str) -> httpx.Response:
    return httpx.get(
        server.api_url + COLLECTIONS,
        params={"api-version": "2016-03-01"},
        headers={"Authorization": authorization, **headers},
        timeout=30,
    )


def _throttled(response: httpx.Response) -> int:
    """The `Retry-After` of a 429 answer, after checking its shape."""
    error = arm_error(response, 429)
    assert error["code"] == "TooManyRequests"
    retry_after = int(response.headers["Retry-After"])
    assert 1 <= retry_after <= WINDOW.total_seconds()
    return retry_after


def test_wrong_keys_are_answered_429_after_the_limit(server, caplog) -> None:
    caplog.set_level(logging.INFO)
    for _ in range(LIMIT):
        assert _get(server, WRONG).status_code == 401
    for _ in range(5):
        _throttled(_get(server, WRONG))
    said = [r for r in caplog.records if "wrong" in r.getMessage()]
    throttling = [r for r in said if "127.0.0.1" in r.getMessage()]
    assert len(throttling) == 1 and throttling[0].levelno == logging.WARNING
    assert "not-the-key" not in caplog.text


def test_a_forged_x_forwarded_for_does_not_escape_the_limit(server) -> None:
    """Without a trusted proxy the header is the client's word: every request is still
    127.0.0.1's."""
    for i in range(LIMIT):
        assert _get(server, WRONG, **{"X-Forwarded-For": f"198.51.100.{i}"}).status_code == 401
    _throttled(_get(server, WRONG, **{"X-Forwarded-For": "198.51.100.200"}))


def test_after_the_window_wrong_keys_are_401_again(server, clock) -> None:
    for _ in range(LIMIT):
        _get(server, WRONG)
    retry_after = _throttled(_get(server, WRONG))
    clock.advance(timedelta(seconds=retry_after - 1))
    _throttled(_get(server, WRONG))
    clock.advance(timedelta(seconds=1))
    assert _get(server, WRONG).status_code == 401


def test_a_valid_key_from_the_same_address_still_passes(server) -> None:
    """An API client keeps working while someone at its address (the same NAT, the same
    proxy) guesses keys."""
    assert _get(server, VALID).status_code == 200
    for _ in range(LIMIT):
        _get(server, WRONG)
    _throttled(_get(server, WRONG))
    assert _get(server, VALID).status_code == 200
    _throttled(_get(server, WRONG))


@pytest.fixture
def behind_proxy(settings, clock):
    """The app behind a proxy at 127.0.0.1 (every test request's peer), which says who the
    client is in `X-Forwarded-For`."""
    trusting = replace(settings, trusted_proxies=("127.0.0.1/32",))
    with serve(create_app(trusting, clock=clock)) as server:
        yield server


def test_each_client_address_has_its_own_limit(behind_proxy) -> None:
    attacker, user = {"X-Forwarded-For": "203.0.113.9"}, {"X-Forwarded-For": "198.51.100.7"}
    for _ in range(LIMIT):
        assert _get(behind_proxy, WRONG, **attacker).status_code == 401
    _throttled(_get(behind_proxy, WRONG, **attacker))
    assert _get(behind_proxy, WRONG, **user).status_code == 401
    assert _get(behind_proxy, VALID, **user).status_code == 200


def test_an_address_that_never_sent_a_valid_key_is_refused_whatever_it_sends(behind_proxy) -> None:
    """Otherwise the 429 would be an oracle: wrong keys 429, the right one 200, at any rate."""
    guesser = {"X-Forwarded-For": "203.0.113.9"}
    for _ in range(LIMIT):
        _get(behind_proxy, WRONG, **guesser)
    _throttled(_get(behind_proxy, VALID, **guesser))


def test_the_proxy_chain_is_read_from_the_right(behind_proxy) -> None:
    """A client can put anything at the left of X-Forwarded-For; the entry the trusted proxy
    added (the right-most) is the client."""
    for i in range(LIMIT):
        chain = {"X-Forwarded-For": f"10.9.9.{i}, 203.0.113.9"}
        assert _get(behind_proxy, WRONG, **chain).status_code == 401
    _throttled(_get(behind_proxy, WRONG, **{"X-Forwarded-For": "10.9.9.99, 203.0.113.9"}))


def test_public_paths_are_not_limited(server) -> None:
    for _ in range(LIMIT):
        _get(server, WRONG)
    assert httpx.get(server.api_url + "/health", timeout=30).status_code in (200, 503)


def test_requests_without_a_key_guess_nothing_and_do_not_count(server) -> None:
    for authorization in ["", "Basic dXNlcjpwdw==", "Bearer"] * (LIMIT // 2):
        assert _get(server, authorization).status_code == 401
    assert _get(server, WRONG).status_code == 401
