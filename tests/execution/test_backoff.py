"""Extension 1 (retry with backoff) in the executor: the real Runtime on a hand-moved clock
with a scripted random source, real Azurite, a real local HTTP target answering 503 and 429
with `Retry-After`. The delays asserted are worked out by hand from the module rules
(`execution/backoff.py`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest

from scheduler_lib.actions import ActionOutcome
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution.backoff import Failure, full_jitter, retry_after
from scheduler_lib.execution.execute import ExecutionReport
from scheduler_lib.execution.retry import RetryPolicy
from tests.execution.harness import T0, Driver, http_action, make_job
from tests.support.http_target import HttpTarget


def scripted(*draws: float) -> Callable[[], float]:
    """A random source that returns `draws` in order (and fails the test past them)."""
    values: Iterator[float] = iter(draws)
    return lambda: next(values)


def exponential(**extra: Any) -> dict[str, Any]:
    return {"retryType": "Exponential", "retryInterval": "PT20S", "retryCount": 4, **extra}


def play(driver: Driver, first: ExecutionMessage) -> list[ExecutionReport]:
    """Run `first` and every follow-up at the instant it becomes due."""
    reports, message = [], first
    while message is not None:
        report = driver.run(message)
        reports.append(report)
        message = report.follow_up
        if report.follow_up_at is not None:
            driver.clock.now = max(driver.clock.now, report.follow_up_at)
    return reports


def delays(reports: list[ExecutionReport]) -> list[float]:
    return [
        (r.follow_up_at - r.history.end_time).total_seconds()
        for r in reports
        if r.follow_up_at is not None and r.history is not None
    ]


def test_delays_grow_with_full_jitter_and_follow_retry_after_within_bounds(
    driver: Driver, target: HttpTarget
) -> None:
    target.reply(503, "busy", times=2)
    target.reply(429, "slow down", headers={"Retry-After": "120"}, times=1)  # above the cap
    target.reply(429, "slow down", headers={"Retry-After": "5"}, times=1)  # below the floor
    target.reply(503, "still busy")
    driver.draw = scripted(0.5, 0.9)  # only the two jittered delays draw
    policy = exponential(maxRetryInterval="PT1M")
    job = make_job(driver.store, http_action(target.url, retryPolicy=policy))

    reports = play(driver, ExecutionMessage.scheduled(job.key, T0, 1))

    # retry 1: 0.5 * min(60, 20); retry 2: 0.9 * min(60, 40); then Retry-After 120 -> 60
    # (maxRetryInterval) and 5 -> 20 (retryInterval); the fifth attempt was the last.
    assert delays(reports) == [10.0, 36.0, 60.0, 20.0]
    history = driver.history(job.key)
    assert [(h.status, h.retry_count) for h in history] == [("Failed", n) for n in range(5)]
    for entry, report in zip(history[1:], reports, strict=False):  # each retry when due
        assert report.follow_up_at is not None
        assert timedelta(0) <= entry.start_time - report.follow_up_at < timedelta(seconds=2)
    assert len(target.requests) == 5
    after = driver.job(job.key)
    assert (after.execution_count, after.failure_count, after.faulted_count) == (5, 5, 1)


def test_an_http_date_retry_after_is_a_wait_until_then(driver: Driver, target: HttpTarget) -> None:
    when = format_datetime(T0 + timedelta(minutes=3), usegmt=True)
    target.reply(503, "maintenance", headers={"Retry-After": when}, times=1)
    policy = exponential(maxRetryInterval="PT10M")
    job = make_job(driver.store, http_action(target.url, retryPolicy=policy))

    [failed, succeeded] = play(driver, ExecutionMessage.scheduled(job.key, T0, 1))

    assert failed.follow_up_at == T0 + timedelta(minutes=3)
    assert succeeded.history is not None and succeeded.history.status == "Completed"


def test_retry_on_retries_the_listed_failures_only(driver: Driver, target: HttpTarget) -> None:
    target.reply(500, "down", path="/flaky", times=1)
    target.reply(404, "no such thing", path="/flaky")
    target.reply(200, "alerted", path="/alert")
    driver.draw = scripted(0.0)
    policy = exponential(retryOn=["5xx", "408", "429", "transport"])
    error_action = {"type": "Http", "request": {"uri": target.url_for("/alert"), "method": "GET"}}
    action = http_action(target.url_for("/flaky"), retryPolicy=policy, errorAction=error_action)
    job = make_job(driver.store, action)

    reports = play(driver, ExecutionMessage.scheduled(job.key, T0, 1))

    # 500 is listed: retried (after 0 * 20 s); 404 is not: the occurrence faults at once.
    assert [r.path for r in target.requests] == ["/flaky", "/flaky", "/alert"]
    assert [(r.action_name, r.attempt) for r in reports] == [
        ("MainAction", 0), ("MainAction", 1), ("ErrorAction", 0),
    ]  # fmt: skip
    assert driver.job(job.key).faulted_count == 1


def test_a_transport_failure_retries_when_listed(driver: Driver, target: HttpTarget) -> None:
    with HttpTarget() as gone:
        closed = gone.url  # nothing listens there once the block ends
    driver.draw = scripted(0.25)
    policy = exponential(retryCount=1, retryOn=["transport"])
    job = make_job(driver.store, http_action(closed, retryPolicy=policy))

    reports = play(driver, ExecutionMessage.scheduled(job.key, T0, 1))

    assert delays(reports) == [5.0]
    assert [h.retry_count for h in driver.history(job.key)] == [0, 1]


def test_retries_stop_once_the_occurrence_is_older_than_max_retry_duration(
    driver: Driver, target: HttpTarget
) -> None:
    target.reply(503, "busy")
    driver.draw = scripted(0.99, 0.99)
    policy = exponential(maxRetryDuration="PT1M", retryCount=10)
    job = make_job(driver.store, http_action(target.url, retryPolicy=policy))

    reports = play(driver, ExecutionMessage.scheduled(job.key, T0, 1))

    # Retry 1 comes 19.8 s after the first failure; retry 2 would come 39.6 s after the
    # second, past T0 + 1 minute: it is not sent, and the occurrence faults with 8 retries left.
    assert len(reports) == 2 and reports[-1].follow_up is None
    assert reports[0].follow_up_at is not None
    assert reports[0].follow_up_at <= T0 + timedelta(minutes=1)
    assert [h.retry_count for h in driver.history(job.key)] == [0, 1]
    assert driver.job(job.key).faulted_count == 1


def test_a_fixed_policy_with_retry_on_keeps_its_interval(
    driver: Driver, target: HttpTarget
) -> None:
    target.reply(429, "slow down", headers={"Retry-After": "600"})
    policy = {"retryType": "Fixed", "retryInterval": "PT30S", "retryCount": 1, "retryOn": ["429"]}
    job = make_job(driver.store, http_action(target.url, retryPolicy=policy))

    reports = play(driver, ExecutionMessage.scheduled(job.key, T0, 1))

    assert delays(reports) == [30.0]  # Fixed is fixed: Retry-After is for Exponential


@pytest.mark.parametrize(
    ("retry", "draw", "expected"),
    [(0, 1.0, 20), (1, 1.0, 40), (2, 1.0, 80), (3, 1.0, 100), (60, 1.0, 100), (2, 0.0, 0)],
)
def test_full_jitter_bounds(retry: int, draw: float, expected: float) -> None:
    delay = full_jitter(timedelta(seconds=20), timedelta(seconds=100), retry, lambda: draw)
    assert delay == timedelta(seconds=expected)


def test_retry_after_forms() -> None:
    now = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
    assert retry_after("42", now=now) == timedelta(seconds=42)
    assert retry_after("Wed, 04 Mar 2026 09:02:00 GMT", now=now) == timedelta(minutes=2)
    assert retry_after("Wed, 04 Mar 2026 08:00:00 GMT", now=now) == timedelta(0)  # past
    assert retry_after("soon", now=now) is None and retry_after(None, now=now) is None
    assert retry_after("-5", now=now) is None


def test_a_resumed_attempt_reads_its_status_from_the_history_message() -> None:
    message = "Http Action - Response from host 'example.com': '404' Response Headers: x"
    assert Failure.of(None, message) == Failure(404)
    assert Failure.of(None, "Http Action - Request to host 'x' failed: refused") == Failure()
    assert Failure.of(ActionOutcome(False, "m", 503, "7"), "") == Failure(503, "7")
    assert Failure(404).matches(["5xx", "429"]) is False
    assert Failure(None).matches(None) is True


def test_a_stored_policy_is_read_with_its_extension_keys() -> None:
    stored = {"retryPolicy": exponential(maxRetryInterval="PT5M", retryOn=["5xx"])}
    policy = RetryPolicy.from_action(stored)
    assert (policy.retry_type, policy.max_interval) == ("Exponential", timedelta(minutes=5))
    assert policy.retry_on == frozenset({"5xx"}) and policy.max_duration is None
    assert RetryPolicy.from_action({"retryPolicy": exponential()}).max_interval == timedelta(
        hours=1
    )
