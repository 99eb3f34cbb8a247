"""Failure paths of the executor against real Azurite and a real HTTP server: retries with
their queue delays, parking beyond the queue's limit, errorAction, faults and final states."""

from __future__ import annotations

from datetime import timedelta

import pytest

from scheduler_lib.domain import JobDefinition
from scheduler_lib.domain.messages import ERROR_ACTION, ExecutionMessage
from scheduler_lib.execution.finish import Delivery
from scheduler_lib.store.due_index import due_rows
from tests.execution.harness import (
    T0,
    Driver,
    http_action,
    make_job,
)
from tests.support.http_target import HttpTarget

POLICY_2X = {"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 2}


def test_a_failed_attempt_is_resent_with_the_retry_interval_as_its_delay(
    driver: Driver, target: HttpTarget
) -> None:
    target.reply(500, "busy")
    job = make_job(driver.store, http_action(target.url), next_execution_time=T0)
    first = ExecutionMessage.scheduled(job.key, T0, 1)

    report = driver.run(first)

    [entry] = driver.history(job.key)
    assert (entry.status, entry.retry_count) == ("Failed", 0)
    assert "'500'" in entry.message and "busy" in entry.message
    assert report.follow_up == first.next_attempt()
    assert report.delivery is Delivery.QUEUED
    assert report.follow_up_at == entry.end_time + timedelta(seconds=30)
    # The queue holds the retry, but it is not receivable before its 30 seconds have passed.
    assert driver.queue_length() == 1
    assert driver.queued() == []
    after = driver.job(job.key)
    assert (after.execution_count, after.failure_count, after.faulted_count) == (1, 1, 0)


def test_a_retry_longer_than_the_queue_allows_is_parked_in_the_due_index(
    driver: Driver, target: HttpTarget
) -> None:
    target.reply(500)
    policy = {"retryType": "Fixed", "retryInterval": "P10D", "retryCount": 1}
    job = make_job(driver.store, http_action(target.url, retryPolicy=policy))

    report = driver.run(ExecutionMessage.scheduled(job.key, T0, 1))

    assert report.delivery is Delivery.PARKED
    assert driver.queue_length() == 0
    due = report.follow_up_at
    assert due is not None and due - T0 > timedelta(days=10)
    [row] = due_rows(driver.store, start=due, through=due)
    assert row.job_key == job.key
    assert ExecutionMessage.from_json(row.payload) == report.follow_up


def test_retries_then_error_action_then_fault(driver: Driver, target: HttpTarget) -> None:
    """Main action fails 1 + 2 times, the errorAction runs under the same policy (fails once,
    then succeeds); the occurrence is faulted, and as the job's last one, the job is Faulted."""
    target.reply(500, "main down", path="/main")
    target.reply(502, "error handler hiccup", path="/error", times=1)
    action = http_action(
        target.url_for("/main"),
        retryPolicy=POLICY_2X,
        errorAction={"type": "Http", "request": {"uri": target.url_for("/error"), "method": "GET"}},
    )
    job = make_job(driver.store, action, next_execution_time=None, occurrences=1)
    message = ExecutionMessage.scheduled(job.key, T0, 1)

    reports = []
    while message is not None:
        report = driver.run(message)
        reports.append(report)
        if report.follow_up is not None:
            gap = report.follow_up_at - report.history.end_time
            assert gap == (timedelta(minutes=1) if report.follow_up.attempt else timedelta(0))
        message = report.follow_up
        driver.clock.advance(timedelta(minutes=1))

    steps = [(r.action_name, r.attempt, r.history.status) for r in reports]
    assert steps == [
        ("MainAction", 0, "Failed"),
        ("MainAction", 1, "Failed"),
        ("MainAction", 2, "Failed"),
        ("ErrorAction", 0, "Failed"),
        ("ErrorAction", 1, "Completed"),
    ]
    assert len(target.requests_to("/main")) == 3 and len(target.requests_to("/error")) == 2
    tags = {r.header("x-ms-execution-tag") for r in target.requests}
    assert tags == {reports[0].execution_tag}  # the same tag across retries and errorAction
    history = driver.history(job.key)
    assert [(h.action_name, h.retry_count, h.repeat_count) for h in history] == [
        (name, attempt, 1) for name, attempt, _ in steps
    ]
    after = driver.job(job.key)
    assert (after.execution_count, after.failure_count, after.faulted_count) == (3, 3, 1)
    assert after.state == "Faulted"
    assert [r.job_state for r in reports] == ["Enabled"] * 4 + ["Faulted"]


@pytest.mark.parametrize(
    ("replies", "next_time", "state", "faulted"),
    [
        pytest.param([200], None, "Completed", 0, id="last-occurrence-succeeds-completed"),
        pytest.param([500, 200], None, "Completed", 0, id="succeeds-on-retry-completed"),
        pytest.param([500, 500], None, "Faulted", 1, id="retries-exhausted-faulted"),
        pytest.param([500, 500], T0, "Enabled", 1, id="more-occurrences-stays-enabled"),
    ],
)
def test_state_after_the_occurrence(
    driver: Driver,
    target: HttpTarget,
    replies: list[int],
    next_time: object,
    state: str,
    faulted: int,
) -> None:
    for status in replies:
        target.reply(status, times=1)
    policy = {"retryType": "Fixed", "retryInterval": "PT15S", "retryCount": 1}
    job = make_job(
        driver.store, http_action(target.url, retryPolicy=policy), next_execution_time=next_time
    )
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    while message is not None:
        message = driver.run(message).follow_up

    after = driver.job(job.key)
    assert (after.state, after.faulted_count, after.execution_count) == (
        state, faulted, len(replies),
    )  # fmt: skip
    assert (after.bookkeeping.ended_at is not None) == (state != "Enabled")


def test_retry_type_none_faults_at_the_first_failure(driver: Driver, target: HttpTarget) -> None:
    target.reply(404)
    job = make_job(driver.store, http_action(target.url, retryPolicy={"retryType": "None"}))

    report = driver.run(ExecutionMessage.scheduled(job.key, T0, 1))

    assert report.follow_up is None and driver.queue_length() == 0
    assert driver.job(job.key).faulted_count == 1


def test_the_error_action_is_sent_at_once_and_is_receivable(
    driver: Driver, target: HttpTarget
) -> None:
    target.reply(500, path="/main")
    action = http_action(
        target.url_for("/main"),
        retryPolicy={"retryType": "None"},
        errorAction={"type": "Http", "request": {"uri": target.url_for("/err"), "method": "GET"}},
    )
    job = make_job(driver.store, action, next_execution_time=T0)

    driver.run(ExecutionMessage.scheduled(job.key, T0, 1))

    [error] = driver.queued()
    assert (error.action, error.attempt) == (ERROR_ACTION, 0)
    report = driver.run(error)
    assert report.history.action_name == "ErrorAction"
    [request] = target.requests_to("/err")
    assert request.method == "GET"
    after = driver.job(job.key)
    # The errorAction is not an execution of the job: counters come from the main action only.
    assert (after.execution_count, after.failure_count, after.faulted_count) == (1, 1, 1)
    assert after.state == "Enabled"


def test_an_error_action_removed_meanwhile_ends_the_occurrence(
    driver: Driver, target: HttpTarget
) -> None:
    from dataclasses import replace

    from scheduler_lib.store.jobs import put_job

    target.reply(500)
    action = http_action(
        target.url,
        retryPolicy={"retryType": "None"},
        errorAction={"type": "Http", "request": {"uri": target.url, "method": "GET"}},
    )
    job = make_job(driver.store, action, next_execution_time=None)
    error = driver.run(ExecutionMessage.scheduled(job.key, T0, 1)).follow_up
    current = driver.job(job.key)
    definition = {**current.definition.document, "action": http_action(target.url)}
    put_job(driver.store, replace(current, definition=JobDefinition(definition)), etag=current.etag)

    report = driver.run(error)

    assert report.disposition == "Dropped"
    assert len(target.requests) == 1
    assert driver.job(job.key).state == "Faulted"


def test_an_earlier_occurrence_still_retrying_holds_the_completion_back(
    driver: Driver, target: HttpTarget
) -> None:
    """Occurrence 1 is retrying when the final occurrence 2 succeeds: the job completes only
    when occurrence 1 is over too."""
    target.reply(500, path="/", times=1)
    job = make_job(
        driver.store, http_action(target.url_for("/")), occurrences=2, next_execution_time=None
    )
    retry = driver.run(ExecutionMessage.scheduled(job.key, T0, 1)).follow_up

    driver.clock.now = T0 + timedelta(seconds=10)
    last = driver.run(ExecutionMessage.scheduled(job.key, T0 + timedelta(seconds=10), 2))
    assert last.job_state == "Enabled"

    finished = driver.run(retry)
    assert finished.history.status == "Completed"
    assert finished.job_state == "Completed"


def test_invalid_stored_retry_policy_fails_before_the_attempt(
    driver: Driver, target: HttpTarget
) -> None:
    from scheduler_lib.errors import ValidationError

    policy = {"retryType": "Fixed", "retryInterval": "PT1S", "retryCount": 2}
    job = make_job(driver.store, http_action(target.url, retryPolicy=policy))

    with pytest.raises(ValidationError, match="retryInterval"):
        driver.run(ExecutionMessage.scheduled(job.key, T0, 1))
    assert target.requests == []


@pytest.mark.parametrize(
    ("error_policy", "error_attempts"),
    [
        pytest.param(None, 3, id="inherits-the-main-policy-1-plus-2"),
        pytest.param({"retryType": "None"}, 1, id="its-own-policy-none"),
    ],
)
def test_error_action_retry_policy(
    driver: Driver, target: HttpTarget, error_policy: dict | None, error_attempts: int
) -> None:
    target.reply(500)  # everything fails
    error_action = {"type": "Http", "request": {"uri": target.url_for("/e"), "method": "GET"}}
    if error_policy is not None:
        error_action["retryPolicy"] = error_policy
    action = http_action(
        target.url_for("/m"),
        retryPolicy={"retryType": "Fixed", "retryInterval": "PT15S", "retryCount": 2},
        errorAction=error_action,
    )
    job = make_job(driver.store, action)
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    while message is not None:
        message = driver.run(message).follow_up

    assert len(target.requests_to("/m")) == 3
    assert len(target.requests_to("/e")) == error_attempts
