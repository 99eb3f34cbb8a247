"""Http/Https actions against a real local HTTP server (tests/support/http_target.py)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from devtools.azurite import free_port
from scheduler_lib.actions import ActionOutcome, ExecutionContext, run_action
from scheduler_lib.actions.http import USER_AGENT
from scheduler_lib.config import Settings
from scheduler_lib.domain.messages import ExecutionMessage
from tests.execution.harness import T0, Driver, make_job
from tests.execution.harness import http_action as harness_action
from tests.support.http_target import HttpTarget

JOB_ID = (
    "/subscriptions/0000/resourceGroups/rg/providers/Microsoft.Scheduler"
    "/jobCollections/coll/jobs/job1"
)
COLLECTION_ID = JOB_ID.rsplit("/jobs/", 1)[0]
CONTEXT = ExecutionContext(
    job_id=JOB_ID,
    job_collection_id=COLLECTION_ID,
    expected_execution_time=datetime(2024, 3, 1, 10, 0, tzinfo=UTC),
    execution_tag="tag-2024-03-01T10:00",
    retry_count=1,
)
PASSWORD = "pa55-w0rd-basic"


@pytest.fixture
def target() -> Iterator[HttpTarget]:
    with HttpTarget() as server:
        yield server


def http_action(uri: str, method: str = "GET", **request: Any) -> dict[str, Any]:
    return {"type": "Http", "request": {"uri": uri, "method": method, **request}}


def run(action: dict[str, Any], **adapters: Any) -> ActionOutcome:
    return run_action(action, CONTEXT, Settings(), **adapters)


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "DELETE", "PATCH", "MERGE"])
def test_sends_method_uri_headers_and_body(target: HttpTarget, method: str) -> None:
    action = http_action(
        target.url_for("/hook?x=1"),
        method.lower(),
        body='{"hello": "wörld"}',
        headers={"Content-Type": "application/json", "X-Custom": "yes"},
    )
    outcome = run(action)
    assert outcome.succeeded, outcome.message
    [request] = target.requests
    assert (request.method, request.path) == (method, "/hook?x=1")
    assert request.json() == {"hello": "wörld"}
    assert request.header("Content-Type") == "application/json"
    assert request.header("X-Custom") == "yes"


def test_sends_the_identifying_headers_azure_scheduler_sent(target: HttpTarget) -> None:
    run(http_action(target.url))
    run(http_action(target.url))
    first, second = target.requests
    assert first.header("x-ms-scheduler-jobid") == JOB_ID
    assert first.header("x-ms-scheduler-jobcollectionid") == COLLECTION_ID
    assert first.header("x-ms-scheduler-expected-execution-time") == "2024-03-01T10:00:00Z"
    assert first.header("x-ms-execution-tag") == "tag-2024-03-01T10:00"
    assert first.header("User-Agent") == USER_AGENT
    # one client request id per attempt, so a target can tell attempts apart
    ids = {first.header("x-ms-client-request-id"), second.header("x-ms-client-request-id")}
    assert len(ids) == 2 and None not in ids


def test_expected_execution_time_is_sent_in_utc() -> None:
    plus_two = timezone(timedelta(hours=2))
    context = ExecutionContext("j", "c", datetime(2024, 3, 1, 12, 0, 30, 5000, plus_two), "t")
    assert context.expected_execution_time_iso == "2024-03-01T10:00:30.005000Z"
    with pytest.raises(ValueError, match="timezone-aware"):
        ExecutionContext("j", "c", datetime(2024, 3, 1), "t")


def test_user_headers_cannot_replace_identifying_headers(target: HttpTarget) -> None:
    headers = {"X-MS-Execution-Tag": "forged", "user-agent": "my-agent/1.0"}
    run(http_action(target.url, headers=headers))
    [request] = target.requests
    assert request.header("x-ms-execution-tag") == CONTEXT.execution_tag
    assert request.header("User-Agent") == "my-agent/1.0"  # the User-Agent is the user's call


@pytest.mark.parametrize(
    ("status", "succeeded"),
    [
        pytest.param(200, True, id="200-ok"),
        pytest.param(201, True, id="201-created"),
        pytest.param(202, True, id="202-accepted"),
        pytest.param(204, True, id="204-no-content"),
        pytest.param(299, True, id="299-last-2xx"),
        pytest.param(304, False, id="304-not-modified"),
        pytest.param(400, False, id="400-bad-request"),
        pytest.param(401, False, id="401-unauthorized"),
        pytest.param(404, False, id="404-not-found"),
        pytest.param(500, False, id="500-server-error"),
        pytest.param(503, False, id="503-unavailable"),
    ],
)
def test_only_2xx_is_success(target: HttpTarget, status: int, succeeded: bool) -> None:
    target.reply(status, "" if status in (204, 304) else f"answer {status}", {"X-Answer": "a"})
    outcome = run(http_action(target.url_for("/status")))
    assert outcome.succeeded is succeeded
    assert outcome.status_code == status
    assert outcome.message.startswith(f"Http Action - Response from host '127.0.0.1': '{status}'")
    assert "X-Answer: a" in outcome.message
    if status not in (204, 304):
        assert outcome.message.endswith(f"Body: answer {status}")


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_redirects_are_reported_not_followed(target: HttpTarget, status: int) -> None:
    target.reply(200, "moved here", path="/new")
    target.reply(status, "", {"Location": target.url_for("/new")}, path="/old")
    outcome = run(http_action(target.url_for("/old"), "POST", body="payload"))
    assert not outcome.succeeded
    assert outcome.status_code == status
    assert f"Location: {target.url_for('/new')}" in outcome.message
    assert [r.path for r in target.requests] == ["/old"]


def test_body_in_message_is_cut_at_2048_bytes(target: HttpTarget) -> None:
    target.reply(500, "é" * 3000)  # 2 bytes each: the cut falls on a character boundary
    outcome = run(http_action(target.url))
    body = outcome.message.split(" Body: ", 1)[1]
    assert body == "é" * 1024


def test_body_cut_inside_a_character_drops_the_half(target: HttpTarget) -> None:
    target.reply(500, "a" + "é" * 3000)  # byte 2048 is the first half of an "é"
    body = run(http_action(target.url)).message.split(" Body: ", 1)[1]
    assert body == "a" + "é" * 1023


def test_slow_target_times_out(target: HttpTarget) -> None:
    target.reply(200, "too late", delay=10)  # released when the target closes
    outcome = run(http_action(target.url), timeout=0.2)
    assert outcome == ActionOutcome(
        False,
        "Http Action - Request to host '127.0.0.1' failed: "
        "the host did not answer within 0.2 seconds",
    )
    # It did arrive; the answer did not. The client gave up after 0.2 s, perhaps before the
    # target's thread recorded the request (a loaded machine): wait for the record.
    assert len(target.wait_for_requests(1)) == 1


def test_connection_refused_is_a_failed_outcome() -> None:
    outcome = run(http_action(f"http://127.0.0.1:{free_port()}/nobody-listens"))
    assert not outcome.succeeded
    assert outcome.status_code is None
    assert outcome.message.startswith("Http Action - Request to host '127.0.0.1' failed: ")
    assert "Connection refused" in outcome.message


def test_basic_authentication_header(target: HttpTarget) -> None:
    auth = {"type": "Basic", "username": "scheduler", "password": PASSWORD}
    assert run(http_action(target.url, authentication=auth)).succeeded
    [request] = target.requests
    scheme, credential = request.header("Authorization").split(" ")
    assert scheme == "Basic"
    assert base64.b64decode(credential).decode() == f"scheduler:{PASSWORD}"


def test_basic_authentication_replaces_a_user_authorization_header(target: HttpTarget) -> None:
    auth = {"type": "Basic", "username": "u", "password": PASSWORD}
    run(http_action(target.url, headers={"Authorization": "Bearer x"}, authentication=auth))
    assert target.requests[0].header("Authorization").startswith("Basic ")


def echo(request: Any) -> str:
    """An endpoint that reflects what it got, like httpbin's /anything."""
    headers = "\n".join(f"{k}: {v}" for k, v in request.headers.items())
    return f"{request.method} {request.path}\n{headers}\n\n{request.text}"


def test_secrets_never_reach_the_message_even_when_echoed(target: HttpTarget) -> None:
    target.reply(500, echo, {"Authorization": "Basic c2VjcmV0", "X-Echo": PASSWORD})
    auth = {"type": "Basic", "username": "scheduler", "password": PASSWORD}
    outcome = run(
        http_action(target.url, "POST", body=f"my password is {PASSWORD}", authentication=auth)
    )
    credential = base64.b64encode(f"scheduler:{PASSWORD}".encode()).decode()
    assert credential in target.requests[0].header("Authorization")  # it was sent...
    assert PASSWORD not in outcome.message  # ...but is never written down
    assert credential not in outcome.message
    assert "c2VjcmV0" not in outcome.message  # response Authorization header values are hidden
    assert "Authorization: ***" in outcome.message
    assert "my password is ***" in outcome.message


def test_unknown_authentication_type_is_a_failed_outcome_naming_the_field(
    target: HttpTarget,
) -> None:
    outcome = run(http_action(target.url, authentication={"type": "Kerberos"}))
    assert not outcome.succeeded
    assert "action.request.authentication.type" in outcome.message
    assert target.requests == []


def test_a_json_echo_of_the_password_is_hidden(target: HttpTarget) -> None:
    """A target that echoes the request inside JSON escapes the password's `"`, `\\`, `/` and
    non-ASCII characters; the history shows none of it."""
    password = 'pä"ss\\w/rd'
    target.reply(200, lambda r: json.dumps({"body": r.text, "auth": r.header("Authorization")}))
    auth = {"type": "Basic", "username": "u", "password": password}
    outcome = run(
        http_action(target.url, "POST", body=json.dumps({"pw": password}), authentication=auth)
    )
    assert outcome.succeeded
    body = outcome.message.split("Body: ", 1)[1]
    assert json.loads(body) == {"body": '{"pw": "***"}', "auth": "Basic ***"}


def test_a_stored_job_with_host_or_framing_headers_fails_without_sending(
    target: HttpTarget,
) -> None:
    """A job stored before these headers were refused: the attempt fails naming the header
    and nothing is sent (without it, the request would go to another virtual host or be
    framed otherwise than the job says)."""
    for name, value in (
        ("Host", "internal.example"),
        ("transfer-encoding", "chunked"),
        ("Content-Length", "999"),
    ):
        action = http_action(target.url_for("/x"), "POST", body="ping", headers={name: value})
        outcome = run(action)
        assert not outcome.succeeded
        assert outcome.message.startswith(f"Http Action - action.request.headers.{name}: ")
        assert "RFC 911" in outcome.message and "remove" in outcome.message
    assert target.requests == []


def test_a_stored_host_header_is_a_failed_attempt_in_the_history(
    driver: Driver, target: HttpTarget
) -> None:
    action = harness_action(target.url_for("/x"), retryPolicy={"retryType": "None"})
    action["request"]["headers"] = {"Host": "admin.internal", "X-Fine": "1"}
    job = make_job(driver.store, action)
    report = driver.run(ExecutionMessage.scheduled(job.key, T0, 1))
    assert report.history.status == "Failed"
    [entry] = driver.history(job.key)
    assert "action.request.headers.Host" in entry.message
    assert target.requests == []
