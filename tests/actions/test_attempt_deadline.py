"""An HTTP attempt's timeout is a deadline for the whole attempt (connect, send, headers,
body), not a per-read timeout: a real local target that trickles its answer one byte at a
time (tests/support/trickle_target.py) is cut off at the deadline, and the history says so.
The target sleeps between bytes; the tests only measure how long the attempt took."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from scheduler_lib.actions import run_action
from scheduler_lib.actions.oauth import TokenCache
from scheduler_lib.config import Settings
from scheduler_lib.domain.messages import ExecutionMessage
from tests.actions.test_http import CONTEXT
from tests.execution.harness import T0, Driver, make_job
from tests.support.certs import make_pki
from tests.support.http_target import HttpTarget
from tests.support.trickle_target import TrickleTarget

TIMEOUT = 1.5
#: How much later than its deadline an attempt may end: reading the clock, closing the socket
#: and a loaded machine (a per-read timeout would end one `INTERVAL` after the deadline).
MARGIN = 0.75
#: Each byte comes this long after the last: well under TIMEOUT, so no single read times out.
INTERVAL = 0.2
#: Bytes to trickle: 8 s of them, far beyond the deadline.
LENGTH = 40


def http(uri: str, **extra: Any) -> dict[str, Any]:
    return {"type": "Http", "request": {"uri": uri, "method": "GET"}, **extra}


def test_trickled_headers_end_the_attempt_at_its_deadline() -> None:
    with TrickleTarget(part="headers", interval=INTERVAL, length=LENGTH) as target:
        started = time.monotonic()
        outcome = run_action(http(target.url), CONTEXT, Settings(), timeout=TIMEOUT)
        elapsed = time.monotonic() - started
    assert TIMEOUT <= elapsed < TIMEOUT + MARGIN, elapsed
    assert not outcome.succeeded
    assert outcome.message == (
        "Http Action - Request to host '127.0.0.1' failed: "
        "the host did not answer within 1.5 seconds"
    )


def test_a_trickled_body_is_cut_off_at_the_deadline() -> None:
    """The status line came in time, so it decides (as for any unreadable body); the
    message says the rest of the answer did not come within the timeout."""
    with TrickleTarget(part="body", interval=INTERVAL, length=LENGTH) as target:
        started = time.monotonic()
        outcome = run_action(http(target.url), CONTEXT, Settings(), timeout=TIMEOUT)
        elapsed = time.monotonic() - started
    assert TIMEOUT <= elapsed < TIMEOUT + MARGIN, elapsed
    assert outcome.status_code == 200
    assert outcome.message.endswith(
        "Body: <the body did not arrive within the attempt's timeout of 1.5 seconds>"
    )


@pytest.mark.parametrize("part", ["headers", "body"])
def test_the_history_records_the_timeout_of_a_trickling_target(driver: Driver, part: str) -> None:
    with TrickleTarget(part=part, interval=INTERVAL, length=LENGTH) as target:
        driver.adapters["timeout"] = TIMEOUT
        job = make_job(driver.store, http(target.url, retryPolicy={"retryType": "None"}))
        started = time.monotonic()
        report = driver.run(ExecutionMessage.scheduled(job.key, T0, 1))
        elapsed = time.monotonic() - started
    # The run also reads and writes the job and its history in Azurite.
    assert elapsed < TIMEOUT + MARGIN + 2, elapsed
    [entry] = driver.history(job.key)
    assert entry == report.history
    assert "1.5 seconds" in entry.message
    assert entry.status == ("Failed" if part == "headers" else "Completed")


def test_the_token_request_counts_against_the_same_deadline(target: HttpTarget) -> None:
    """ActiveDirectoryOAuth: the token endpoint trickles its answer; the attempt still ends
    at its deadline, and the job's target is never called."""
    with TrickleTarget(part="body", interval=INTERVAL, length=LENGTH) as token_endpoint:
        settings = Settings(oauth_authority=token_endpoint.url.removesuffix("/slow"))
        auth = {
            "type": "ActiveDirectoryOAuth",
            "tenant": "contoso.onmicrosoft.com",
            "audience": "https://management.core.windows.net/",
            "clientId": "c",
            "secret": "s3cret-value",
        }
        action = {
            "type": "Http",
            "request": {"uri": target.url, "method": "POST", "authentication": auth},
        }
        started = time.monotonic()
        outcome = run_action(action, CONTEXT, settings, timeout=TIMEOUT, token_cache=TokenCache())
        elapsed = time.monotonic() - started
    assert TIMEOUT <= elapsed < TIMEOUT + MARGIN, elapsed
    assert not outcome.succeeded
    assert "Could not get an access token" in outcome.message
    assert target.requests == []


def test_the_jobs_own_timeout_is_the_deadline() -> None:
    """api-version 2026-12-01's `timeout` on the action (its minimum, 15 s) wins over the
    executor's default (here 60 s); the target trickles for 30 s."""
    with TrickleTarget(part="headers", interval=0.5, length=60) as target:
        started = time.monotonic()
        outcome = run_action(http(target.url, timeout="PT15S"), CONTEXT, Settings(), timeout=60)
        elapsed = time.monotonic() - started
    assert 15 <= elapsed < 15 + MARGIN, elapsed
    assert outcome.message.endswith("the host did not answer within 15 seconds")


@pytest.mark.parametrize("part", ["headers", "body"])
def test_over_https_too(tmp_path: Path, part: str) -> None:
    """Through TLS the reads are the SSL socket's: the same deadline holds."""
    pki = make_pki(tmp_path)
    server = pki.server_context(require_client_cert=False)
    with TrickleTarget(part=part, interval=INTERVAL, length=LENGTH, ssl_context=server) as target:
        started = time.monotonic()
        outcome = run_action(
            http(target.url), CONTEXT, Settings(), timeout=TIMEOUT, verify=pki.ca_file
        )
        elapsed = time.monotonic() - started
    assert TIMEOUT <= elapsed < TIMEOUT + MARGIN, elapsed
    assert "1.5 seconds" in outcome.message, outcome.message
    assert len(target.requests) == 1  # the handshake and request went through
