"""A job's `missedRunPolicy` applies to a message that arrives late, too: the occurrence was
queued before an outage (the dispatcher sends a minute ahead), so the dispatcher's
postponement after the outage never saw it, and the executor decides with the same function
(`wire/missed.missed_runs`). RunAll runs it late when it lies inside `catchUpWindow`,
RunLatest when no later occurrence was missed; otherwise it is Postponed as before.

Real Azurite tables and queue, a real local HTTP server, an injected clock; the grace period
is PT30S (`late_driver`)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

from scheduler_lib.domain import JobDefinition
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution import CATCH_UP
from scheduler_lib.store.jobs import put_job
from tests.execution.harness import T0, Driver, http_action, make_job
from tests.support.http_target import HttpTarget

EVERY_MINUTE = {"frequency": "Minute", "interval": 1}
HOURLY = {"frequency": "Hour", "interval": 1}


def job_with(driver: Driver, target: HttpTarget, recurrence: dict[str, Any], **policy: str):
    """A job of `recurrence` with the missed-run fields `policy` (as the API stores them)."""
    job = make_job(driver.store, http_action(target.url), recurrence=recurrence)
    definition = {**job.definition.document, **policy}
    return put_job(driver.store, replace(job, definition=JobDefinition(definition)), etag=job.etag)


def test_run_all_runs_a_late_message_inside_its_catch_up_window(
    late_driver: Driver, target: HttpTarget
) -> None:
    driver = late_driver
    job = job_with(driver, target, EVERY_MINUTE, missedRunPolicy="RunAll", catchUpWindow="PT10M")
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    driver.clock.now = T0 + timedelta(minutes=3)  # past the grace period, inside the window

    report = driver.run(message, message_id="m1")

    assert report.disposition == "Postponed"
    [late] = driver.queued()
    assert late == message.late_run(CATCH_UP)  # the occurrence's own tag, marked CatchUp
    ran = driver.run(late)
    assert ran.disposition == "Ran"
    [request] = target.requests
    assert request.header("x-ms-execution-tag") == message.execution_tag
    postponed, completed = driver.history(job.key)
    assert (postponed.status, postponed.expected_execution_time) == ("Postponed", T0)
    assert "Running it late (missedRunPolicy RunAll)" in postponed.message
    assert (completed.status, completed.expected_execution_time) == ("Completed", T0)
    assert completed.message.startswith("[CatchUp] ")
    assert driver.run(message, message_id="m1").disposition == "Duplicate"  # redelivered
    assert driver.queued() == [] and len(target.requests) == 1


def test_run_all_postpones_a_late_message_outside_its_catch_up_window(
    late_driver: Driver, target: HttpTarget
) -> None:
    driver = late_driver
    job = job_with(driver, target, EVERY_MINUTE, missedRunPolicy="RunAll", catchUpWindow="PT10M")
    driver.clock.now = T0 + timedelta(minutes=12)

    report = driver.run(ExecutionMessage.scheduled(job.key, T0, 1), message_id="m1")

    assert report.disposition == "Postponed"
    assert driver.queued() == [] and target.requests == []
    [entry] = driver.history(job.key)
    assert entry.status == "Postponed" and "late (missedRunPolicy" not in entry.message


def test_run_latest_runs_a_late_message_when_nothing_later_was_missed(
    late_driver: Driver, target: HttpTarget
) -> None:
    """An hourly job's occurrence queued before a 3-minute outage is the latest it missed."""
    driver = late_driver
    job = job_with(driver, target, HOURLY, missedRunPolicy="RunLatest")
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    driver.clock.now = T0 + timedelta(minutes=3)

    assert driver.run(message).disposition == "Postponed"
    [late] = driver.queued()
    assert driver.run(late).disposition == "Ran" and len(target.requests) == 1


def test_run_latest_leaves_a_late_message_when_a_later_occurrence_was_missed(
    late_driver: Driver, target: HttpTarget
) -> None:
    """The every-minute job missed 09:01 and 09:02 too: the latest of them is the one that
    runs late (the dispatcher's postponement sends it), not this one."""
    driver = late_driver
    job = job_with(driver, target, EVERY_MINUTE, missedRunPolicy="RunLatest")
    driver.clock.now = T0 + timedelta(minutes=2, seconds=40)

    assert driver.run(ExecutionMessage.scheduled(job.key, T0, 1)).disposition == "Postponed"
    assert driver.queued() == [] and target.requests == []


def test_a_redelivery_after_a_crash_before_the_late_run_was_sent_sends_it(
    late_driver: Driver, target: HttpTarget
) -> None:
    """The worker closed the claim as postponed and died before it sent the late run: the
    queue redelivers the same message, which sends it (once the late run ran, a redelivery
    is a plain Duplicate)."""
    driver = late_driver
    job = job_with(driver, target, EVERY_MINUTE, missedRunPolicy="RunAll", catchUpWindow="PT10M")
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    driver.clock.now = T0 + timedelta(minutes=3)
    driver.run(message, message_id="m1")
    assert len(driver.queued()) == 1  # what the crash lost

    again = driver.run(message, message_id="m1", dequeue_count=2)

    assert again.disposition == "Duplicate"
    [late] = driver.queued()
    assert driver.run(late).disposition == "Ran"
    assert [e.status for e in driver.history(job.key)] == ["Postponed", "Completed"]
    assert driver.run(message, message_id="m1", dequeue_count=3).disposition == "Duplicate"
    assert driver.queued() == [] and len(target.requests) == 1
