"""The executor against real Azurite tables and queues and a real local HTTP server:
one attempt, its headers, history and status; drops; the ExecutionContext."""

from __future__ import annotations

import base64
from datetime import timedelta

import pytest

from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.errors import ValidationError
from scheduler_lib.execution.decide import collection_arm_id, job_arm_id
from scheduler_lib.execution.history import HISTORY_MESSAGE_LIMIT
from scheduler_lib.execution.lifecycle import executor_state
from scheduler_lib.store.history_purge import TICK_BUDGET, pending_history_purges, purge_histories
from scheduler_lib.store.jobs import delete_job
from scheduler_lib.wire.jobs import status_of
from tests.execution.harness import (
    T0,
    Driver,
    http_action,
    make_job,
)
from tests.support.http_target import HttpTarget

JOB_ID = (
    "/subscriptions/Sub-1234/resourceGroups/My-RG/providers/Microsoft.Scheduler"
    "/jobCollections/Nightly-Jobs/jobs/Backup-Job"
)


def test_a_successful_attempt_calls_the_target_and_records_it(
    driver: Driver, target: HttpTarget
) -> None:
    job = make_job(driver.store, http_action(target.url_for("/hook")), next_execution_time=T0)
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    driver.clock.now = T0 + timedelta(seconds=2)

    report = driver.run(message)

    assert report.disposition == "Ran"
    [request] = target.requests
    assert (request.method, request.path, request.text) == ("POST", "/hook", "ping")
    assert request.header("x-ms-scheduler-jobid") == JOB_ID
    assert request.header("x-ms-scheduler-jobcollectionid") == JOB_ID.rsplit("/jobs/", 1)[0]
    assert request.header("x-ms-scheduler-expected-execution-time") == "2026-03-04T09:00:00Z"
    assert request.header("x-ms-execution-tag") == message.execution_tag
    [entry] = driver.history(job.key)
    # The fake clock moves 250 ms per reading: the attempt is timed by its own readings.
    assert T0 + timedelta(seconds=2) <= entry.start_time < entry.end_time < driver.clock.now
    assert entry.to_properties() | {"startTime": "-", "endTime": "-"} == {
        "startTime": "-",
        "endTime": "-",
        "expectedExecutionTime": "2026-03-04T09:00:00Z",
        "actionName": "MainAction",
        "status": "Completed",
        "message": report.outcome.message,
        "retryCount": 0,
        "repeatCount": 1,
    }
    assert "'200'" in entry.message
    after = driver.job(job.key)
    assert status_of(after, T0) == {
        "executionCount": 1,
        "failureCount": 0,
        "faultedCount": 0,
        "lastExecutionTime": entry.to_properties()["startTime"],
        "nextExecutionTime": "2026-03-04T09:00:00Z",
    }
    assert after.state == "Enabled"
    assert report.follow_up is None and driver.queue_length() == 0


def test_basic_authentication_reaches_the_target(driver: Driver, target: HttpTarget) -> None:
    action = http_action(target.url_for("/secure"))
    action["request"]["authentication"] = {"type": "Basic", "username": "u", "password": "p@ss"}
    action["request"]["headers"] = {"Content-Type": "text/plain", "X-Custom": "1"}
    job = make_job(driver.store, action, next_execution_time=T0)

    driver.run(ExecutionMessage.scheduled(job.key, T0, 1))

    [request] = target.requests
    assert request.header("Authorization") == "Basic " + base64.b64encode(b"u:p@ss").decode()
    assert (request.header("Content-Type"), request.header("X-Custom")) == ("text/plain", "1")
    [entry] = driver.history(job.key)
    assert "p@ss" not in entry.message and "dTpwQHNz" not in entry.message


def test_context_uses_original_spellings(driver: Driver, target: HttpTarget) -> None:
    job = make_job(driver.store, http_action(target.url))
    assert job_arm_id(job) == JOB_ID
    assert collection_arm_id(job) + "/jobs/Backup-Job" == JOB_ID


def test_history_message_keeps_only_the_first_2048_bytes_of_the_body(
    driver: Driver, target: HttpTarget
) -> None:
    target.reply(503, "x" * 10_000)
    job = make_job(driver.store, http_action(target.url, retryPolicy={"retryType": "None"}))

    driver.run(ExecutionMessage.scheduled(job.key, T0, 1))

    [entry] = driver.history(job.key)
    assert entry.status == "Failed"
    assert "'503'" in entry.message
    assert "x" * 2048 in entry.message and "x" * 2049 not in entry.message
    assert len(entry.message) <= HISTORY_MESSAGE_LIMIT


def test_an_unreachable_target_is_a_failed_attempt_with_the_error(driver: Driver) -> None:
    action = http_action("http://127.0.0.1:9/nothing-listens", retryPolicy={"retryType": "None"})
    job = make_job(driver.store, action)

    report = driver.run(ExecutionMessage.scheduled(job.key, T0, 1))

    [entry] = driver.history(job.key)
    assert entry.status == "Failed"
    assert "127.0.0.1" in entry.message and "failed" in entry.message
    assert report.outcome is not None and report.outcome.status_code is None


@pytest.mark.parametrize(
    ("state", "collection_state", "manual", "runs"),
    [
        pytest.param("Disabled", "Enabled", False, False, id="disabled-job-scheduled-dropped"),
        pytest.param("Completed", "Enabled", False, False, id="completed-job-scheduled-dropped"),
        pytest.param("Faulted", "Enabled", False, False, id="faulted-job-scheduled-dropped"),
        pytest.param("Enabled", "Disabled", False, False, id="disabled-collection-dropped"),
        pytest.param("Disabled", "Enabled", True, True, id="disabled-job-manual-run-runs"),
        pytest.param("Enabled", "Disabled", True, False, id="disabled-collection-manual-dropped"),
        pytest.param("Enabled", "Suspended", False, False, id="suspended-collection-dropped"),
        pytest.param("Enabled", "Suspended", True, False, id="suspended-collection-manual-dropped"),
    ],
)
def test_which_messages_run(
    driver: Driver,
    target: HttpTarget,
    state: str,
    collection_state: str,
    manual: bool,
    runs: bool,
) -> None:
    job = make_job(
        driver.store, http_action(target.url), state=state, collection_state=collection_state
    )
    message = (
        ExecutionMessage.manual_run(job.key, now=T0)
        if manual
        else ExecutionMessage.scheduled(job.key, T0, 1)
    )

    report = driver.run(message)

    assert report.disposition == ("Ran" if runs else "Dropped")
    assert len(target.requests) == (1 if runs else 0)
    assert len(driver.history(job.key)) == (1 if runs else 0)
    assert driver.job(job.key).state == state


def test_a_deleted_job_is_dropped(driver: Driver, target: HttpTarget) -> None:
    job = make_job(driver.store, http_action(target.url))
    delete_job(driver.store, job)

    report = driver.run(ExecutionMessage.scheduled(job.key, T0, 1))

    assert (report.disposition, report.reason) == ("Dropped", "the job no longer exists")
    assert target.requests == []


@pytest.mark.parametrize(
    "body",
    [
        pytest.param("not json", id="not-json"),
        pytest.param('{"v": 99, "job_key": "k"}', id="unknown-version"),
        pytest.param("", id="empty"),
    ],
)
def test_a_malformed_message_raises_so_the_host_poisons_it(driver: Driver, body: str) -> None:
    with pytest.raises(ValidationError, match="message"):
        driver.execute(body, message_id="m")


def test_a_manual_run_counts_but_never_changes_the_state(
    driver: Driver, target: HttpTarget
) -> None:
    # The job's schedule is over (no next execution) yet it must stay Enabled after a run.
    job = make_job(driver.store, http_action(target.url), next_execution_time=None)

    report = driver.run(ExecutionMessage.manual_run(job.key, now=T0))

    assert report.disposition == "Ran"
    after = driver.job(job.key)
    assert (after.state, after.execution_count, after.next_execution_time) == ("Enabled", 1, None)
    [entry] = driver.history(job.key)
    assert entry.repeat_count == 0


def test_the_job_changing_during_the_attempt_keeps_both_changes(
    driver: Driver, target: HttpTarget
) -> None:
    """The dispatcher advances the job while the action runs: the executor's final write meets
    a new ETag, re-reads and re-applies, keeping the dispatcher's keys."""
    from dataclasses import replace

    from scheduler_lib.store.jobs import put_job

    job = make_job(driver.store, http_action(target.url), next_execution_time=T0)

    def advance_meanwhile(_request: object) -> str:
        current = driver.job(job.key)
        bookkeeping = replace(current.bookkeeping, occurrences=2)
        put_job(
            driver.store,
            replace(current, bookkeeping=bookkeeping, next_execution_time=T0 + timedelta(hours=1)),
            etag=current.etag,
        )
        return "ok"

    target.reply(200, advance_meanwhile)
    driver.run(ExecutionMessage.scheduled(job.key, T0, 1))

    after = driver.job(job.key)
    assert after.bookkeeping.occurrences == 2
    assert after.next_execution_time == T0 + timedelta(hours=1)
    assert after.execution_count == 1
    assert executor_state(after).claims


def test_a_job_deleted_while_its_action_runs_leaves_no_history(
    driver: Driver, target: HttpTarget
) -> None:
    job = make_job(driver.store, http_action(target.url))

    def delete_meanwhile(_request: object) -> str:
        delete_job(driver.store, driver.job(job.key))
        return "ok"

    target.reply(200, delete_meanwhile)
    report = driver.run(ExecutionMessage.scheduled(job.key, T0, 1))

    assert report.disposition == "Ran" and report.job_state is None
    # The executor asks for the purge of the entry it wrote; the next tick's upkeep runs it.
    assert pending_history_purges(driver.store) == [job.history_key]
    purge_histories(driver.store, budget=TICK_BUDGET)
    assert driver.history(job.key) == []
