"""An action that raises (a bug, or a stored definition the HTTP client cannot send) is a
recorded failed attempt that follows the retry policy and the errorAction, not a message
the host retries until it is poisoned with nothing in the history."""

from __future__ import annotations

from datetime import timedelta

from scheduler_lib.domain.messages import ERROR_ACTION, ExecutionMessage
from tests.execution.harness import T0, Driver, http_action, make_job
from tests.support.http_target import HttpTarget


def test_an_action_that_raises_is_a_failed_attempt_then_retried_then_the_error_action(
    driver: Driver, target: HttpTarget
) -> None:
    # Stored before the API validated headers: the HTTP client cannot encode this value.
    main = http_action(target.url_for("/main"))
    main["request"]["headers"] = {"X-Price": "5 \u20ac"}
    main["request"]["authentication"] = {
        "type": "Basic", "username": "svc", "password": "s3cret-Pa55",
    }  # fmt: skip
    main["retryPolicy"] = {"retryType": "Fixed", "retryInterval": "PT30S", "retryCount": 1}
    main["errorAction"] = http_action(target.url_for("/error"), retryPolicy={"retryType": "None"})
    job = make_job(driver.store, main)
    first = ExecutionMessage.scheduled(job.key, T0, 1)
    driver.clock.now = T0

    report = driver.run(first)

    assert report.disposition == "Ran"
    [entry] = driver.history(job.key)
    assert entry.status == "Failed"
    assert "UnicodeEncodeError" in entry.message and "s3cret-Pa55" not in entry.message
    assert report.follow_up == first.next_attempt()

    driver.clock.advance(timedelta(seconds=31))
    report = driver.run(first.next_attempt())
    assert report.follow_up == first.error_action()
    report = driver.run(first.error_action())

    assert [(e.action_name, e.status) for e in driver.history(job.key)] == [
        ("MainAction", "Failed"), ("MainAction", "Failed"), (ERROR_ACTION, "Completed"),
    ]  # fmt: skip
    assert [r.path for r in target.requests] == ["/error"]
    after = driver.job(job.key)
    assert (after.execution_count, after.failure_count, after.faulted_count) == (2, 2, 1)
