"""The executor judges lateness: a scheduled occurrence whose first attempt would start more
than the grace period late (its message was queued before an outage) is recorded as
`Postponed` once and not run; retries of an occurrence that started in time still run.

Real Azurite tables and queue, a real local HTTP server, an injected clock (`SCHEDULER_GRACE_PERIOD`
is PT30S here)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from scheduler_lib.dispatch.job import advanced
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution import lifecycle
from scheduler_lib.store.due_index import DueRow, due_rows
from scheduler_lib.store.jobs import put_job
from scheduler_lib.store.tables import TableStore
from tests.execution.harness import T0, Driver, http_action, make_job
from tests.support.http_target import HttpTarget

EVERY_MINUTE = {"frequency": "Minute", "interval": 1}


def rows_of(store: TableStore, job_key: str) -> list[DueRow]:
    window = {"start": T0 - timedelta(days=1), "through": T0 + timedelta(days=2)}
    return [row for row in due_rows(store, **window) if row.job_key == job_key]


@pytest.mark.parametrize("late", [timedelta(seconds=31), timedelta(seconds=142)])
def test_a_first_attempt_later_than_the_grace_period_is_postponed_once_not_run(
    late_driver: Driver, target: HttpTarget, late: timedelta
) -> None:
    driver = late_driver
    job = make_job(driver.store, http_action(target.url), recurrence=EVERY_MINUTE)
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    driver.clock.now = T0 + late

    report = driver.run(message, message_id="m1")
    again = driver.run(message, message_id="m1")  # redelivered
    resent = driver.run(message, message_id="m2")  # re-sent by a tick

    assert report.disposition == "Postponed"
    assert (again.disposition, resent.disposition) == ("Duplicate", "Duplicate")
    assert target.requests == []
    [entry] = driver.history(job.key)
    assert (entry.status, entry.expected_execution_time, entry.repeat_count) == (
        "Postponed", T0, 1,
    )  # fmt: skip
    assert entry.message.startswith("Postponed: the occurrence due at ")  # as its status says
    assert "grace period (PT30S)" in entry.message
    after = driver.job(job.key)
    assert (after.execution_count, after.failure_count, after.faulted_count) == (0, 0, 0)
    assert after.state == "Enabled" and after.next_execution_time == job.next_execution_time
    assert driver.queue_length() == 0


def test_within_the_grace_period_it_runs(late_driver: Driver, target: HttpTarget) -> None:
    job = make_job(late_driver.store, http_action(target.url), recurrence=EVERY_MINUTE)
    late_driver.clock.now = T0 + timedelta(seconds=29)

    report = late_driver.run(ExecutionMessage.scheduled(job.key, T0, 1))

    assert report.disposition == "Ran" and len(target.requests) == 1


@pytest.mark.parametrize(
    "step",
    [
        pytest.param(lambda m: m.next_attempt(), id="retry"),
        pytest.param(lambda m: m.error_action(), id="error-action"),
        pytest.param(None, id="manual-run"),
    ],
)
def test_retries_error_actions_and_manual_runs_are_never_postponed(
    late_driver: Driver, target: HttpTarget, step
) -> None:
    action = http_action(target.url, errorAction=http_action(target.url))
    job = make_job(late_driver.store, action)
    if step is None:
        message = ExecutionMessage.manual_run(job.key, now=T0)
    else:
        message = step(ExecutionMessage.scheduled(job.key, T0, 1))
    late_driver.clock.now = T0 + timedelta(minutes=10)

    assert late_driver.run(message).disposition == "Ran"
    assert len(target.requests) == 1


def test_a_redelivery_after_a_crash_mid_postponement_writes_no_second_entry(
    late_driver: Driver, target: HttpTarget
) -> None:
    driver = late_driver
    job = make_job(driver.store, http_action(target.url), recurrence=EVERY_MINUTE)
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    driver.clock.now = T0 + timedelta(minutes=2)
    driver.run(message, message_id="m1")
    # The worker died after writing the entry, before closing the claim: the claim is open.
    crashed = driver.job(job.key)
    state = lifecycle.executor_state(crashed)
    open_claim = replace(state.claims[message.execution_tag], done=False, final=False)
    state = replace(state, claims={**state.claims, message.execution_tag: open_claim})
    put_job(
        driver.store,
        replace(crashed, bookkeeping=replace(crashed.bookkeeping, executor=state)),
        etag=crashed.etag,
    )

    report = driver.run(message, message_id="m1")

    assert report.disposition == "Postponed"
    assert [e.status for e in driver.history(job.key)] == ["Postponed"]
    assert lifecycle.executor_state(driver.job(job.key)).claims[message.execution_tag].final


def test_a_postponed_last_occurrence_completes_the_job(
    late_driver: Driver, target: HttpTarget
) -> None:
    job = make_job(late_driver.store, http_action(target.url), next_execution_time=None)
    late_driver.clock.now = T0 + timedelta(minutes=3)

    report = late_driver.run(ExecutionMessage.scheduled(job.key, T0, 1))

    assert report.disposition == "Postponed" and report.job_state == "Completed"
    assert late_driver.job(job.key).state == "Completed" and target.requests == []


def test_a_redelivered_attempt_that_started_in_time_runs_however_late(
    late_driver: Driver, target: HttpTarget
) -> None:
    """The worker claimed it on time and died mid-action; the queue redelivers it minutes
    later. The attempt started in time: it runs again (at-least-once), it is not postponed."""
    driver = late_driver
    job = make_job(driver.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    put_job(driver.store, lifecycle.with_claim(job, message, "m1", now=T0), etag=job.etag)
    driver.clock.now = T0 + timedelta(minutes=5)

    report = driver.run(message, message_id="m1", dequeue_count=2)

    assert report.disposition == "Rerun" and len(target.requests) == 1


def test_a_postponed_occurrence_does_not_use_up_the_count(
    late_driver: Driver, target: HttpTarget
) -> None:
    """`count` counts executions: a postponed occurrence gives its place back, as the
    dispatcher's postponement does. The job had sent its last counted occurrence (none
    left), so it gets one more, the first after now, with its due-index row."""
    recurrence = {**EVERY_MINUTE, "count": 2}
    job = make_job(
        late_driver.store, http_action(target.url), recurrence=recurrence,
        occurrences=2, next_execution_time=None,
    )  # fmt: skip
    late_driver.clock.now = T0 + timedelta(minutes=3, seconds=10)

    report = late_driver.run(ExecutionMessage.scheduled(job.key, T0, 2))

    assert report.disposition == "Postponed" and report.job_state == "Enabled"
    after = late_driver.job(job.key)
    assert after.state == "Enabled"
    assert after.next_execution_time == T0 + timedelta(minutes=4)
    assert [r.due for r in rows_of(late_driver.store, job.key)] == [T0 + timedelta(minutes=4)]
    # The dispatcher then sends it as the job's last occurrence: the count is reached.
    sent = advanced(after, after.next_execution_time)
    assert sent.next_execution_time is None


def test_with_occurrences_still_to_come_the_count_stretches_by_one(
    late_driver: Driver, target: HttpTarget
) -> None:
    recurrence = {**EVERY_MINUTE, "count": 3}
    job = make_job(
        late_driver.store, http_action(target.url), recurrence=recurrence,
        occurrences=2, next_execution_time=T0 + timedelta(minutes=1),
    )  # fmt: skip
    late_driver.clock.now = T0 + timedelta(minutes=3)
    late_driver.run(ExecutionMessage.scheduled(job.key, T0, 2))
    after = late_driver.job(job.key)
    once = advanced(after, T0 + timedelta(minutes=1))
    assert once.next_execution_time == T0 + timedelta(minutes=2)  # 3 runs in all, not 2
    assert advanced(once, T0 + timedelta(minutes=2)).next_execution_time is None
