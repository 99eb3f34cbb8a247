"""What the executor did, as counted: the real `Runtime` (the queue trigger's path) runs
messages against Azurite and a real local HTTP target, flushes its counters to its row, and
the test reads them back as a scrape sums them."""

from __future__ import annotations

from datetime import timedelta

from scheduler_lib.domain import Outcome
from scheduler_lib.domain.messages import ERROR_ACTION, MAIN_ACTION, ExecutionMessage
from scheduler_lib.metrics import catalog
from tests.execution.harness import COLL, T0, Driver, http_action, make_job
from tests.metrics.support import stored, value
from tests.support.http_target import HttpTarget

ONE_RETRY = {"retryType": "Fixed", "retryInterval": "PT30S", "retryCount": 1}


def _counted(driver: Driver):
    driver.runtime.flush_metrics(due_only=False)
    return stored(driver.store, now=driver.clock.now)


def test_a_success_counts_one_completed_occurrence_its_attempt_and_its_lateness(
    driver: Driver, target: HttpTarget
) -> None:
    job = make_job(driver.store, http_action(target.url), next_execution_time=T0)
    driver.clock.now = T0 - timedelta(seconds=2)  # delivered early: it waits for its second

    driver.run(ExecutionMessage.scheduled(job.key, T0, 1))

    counted = _counted(driver)
    labels = {"collection": COLL.lower(), "action_type": "Http"}
    assert value(counted, catalog.OCCURRENCES, outcome=Outcome.COMPLETED, **labels) == 1
    assert value(counted, catalog.OCCURRENCES) == 1
    assert value(counted, catalog.ATTEMPTS, outcome="Completed", action=MAIN_ACTION) == 1
    assert value(counted, catalog.RETRIES) == 0
    assert value(counted, catalog.ACTION_DURATION, **labels) == 1
    [lateness] = counted.histograms[catalog.START_LATENESS.otel].values()
    [entry] = driver.history(job.key)
    assert lateness.count == 1
    assert lateness.total == (entry.start_time - T0).total_seconds() < 1


def test_a_failure_with_a_retry_counts_two_failed_attempts_one_retry_one_fault(
    driver: Driver, target: HttpTarget
) -> None:
    target.reply(500, "down")
    action = http_action(target.url, retryPolicy=ONE_RETRY)
    job = make_job(driver.store, action, next_execution_time=T0)
    first = ExecutionMessage.scheduled(job.key, T0, 1)

    driver.run(first)
    assert value(_counted(driver), catalog.OCCURRENCES) == 0  # a retry follows: not over
    driver.clock.advance(timedelta(seconds=30))
    driver.run(first.next_attempt())

    counted = _counted(driver)
    assert value(counted, catalog.OCCURRENCES, outcome=Outcome.FAULTED) == 1
    assert value(counted, catalog.OCCURRENCES) == 1
    assert value(counted, catalog.ATTEMPTS, outcome="Failed") == 2
    assert value(counted, catalog.RETRIES) == 1
    assert value(counted, catalog.START_LATENESS) == 1  # only the first attempt had a second
    assert value(counted, catalog.ACTION_DURATION) == 2


def test_an_error_action_counts_attempts_not_another_outcome(
    driver: Driver, target: HttpTarget
) -> None:
    target.reply(500, "down", path="/main")
    error = {"type": "Http", "request": {"uri": target.url_for("/error"), "method": "GET"}}
    action = http_action(
        target.url_for("/main"), retryPolicy={"retryType": "None"}, errorAction=error
    )
    job = make_job(driver.store, action, next_execution_time=T0)

    report = driver.run(ExecutionMessage.scheduled(job.key, T0, 1))
    assert report.follow_up is not None and report.follow_up.action == ERROR_ACTION
    driver.run(report.follow_up)

    counted = _counted(driver)
    assert value(counted, catalog.OCCURRENCES, outcome=Outcome.FAULTED) == 1
    assert value(counted, catalog.OCCURRENCES) == 1
    assert value(counted, catalog.ATTEMPTS, action=ERROR_ACTION, outcome="Completed") == 1
    assert value(counted, catalog.ATTEMPTS, action=MAIN_ACTION, outcome="Failed") == 1


def test_an_occurrence_too_late_counts_as_postponed(late_driver: Driver, target: HttpTarget):
    job = make_job(late_driver.store, http_action(target.url), next_execution_time=T0)
    late_driver.clock.now = T0 + timedelta(minutes=5)

    late_driver.run(ExecutionMessage.scheduled(job.key, T0, 1))

    counted = _counted(late_driver)
    assert value(counted, catalog.OCCURRENCES, outcome=Outcome.POSTPONED) == 1
    assert value(counted, catalog.ATTEMPTS) == 0
    assert target.requests == []


def test_a_poisoned_message_counts_as_poisoned(driver: Driver, target: HttpTarget) -> None:
    job = make_job(driver.store, http_action(target.url), next_execution_time=T0)
    message = ExecutionMessage.scheduled(job.key, T0, 1)

    driver.runtime.record_poisoned(message.to_json(), message_id="poisoned-1")

    counted = _counted(driver)
    assert value(counted, catalog.OCCURRENCES, outcome=Outcome.POISONED, action_type="Http") == 1
