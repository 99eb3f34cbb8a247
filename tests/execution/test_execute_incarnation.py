"""A message queued for a job that was then deleted and created again under the same name is
not run against the new job, nor recorded in its history (real Azurite, real HTTP target)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta

from scheduler_lib.domain import Bookkeeping, JobRecord
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution.claims import Attempt, Skip, claim, finish
from scheduler_lib.execution.lifecycle import executor_state
from scheduler_lib.execution.poisoned import record_poisoned
from scheduler_lib.runtime import Runtime
from scheduler_lib.store.jobs import delete_job, put_job
from tests.execution.harness import T0, Driver, http_action, make_job
from tests.support.http_target import HttpTarget


def _recreated(driver: Driver, target: HttpTarget):
    old = make_job(driver.store, http_action(target.url))
    old = put_job(driver.store, replace(old, incarnation="first"), etag=old.etag)
    delete_job(driver.store, old, etag=old.etag)
    new = put_job(driver.store, replace(old, incarnation="second", etag=None), create_only=True)
    return old, new


def test_a_message_of_the_previous_incarnation_is_dropped(
    driver: Driver, target: HttpTarget
) -> None:
    old, new = _recreated(driver, target)
    queued = ExecutionMessage.scheduled(old.key, T0, 1, incarnation="first")

    report = driver.run(queued)
    poisoned = record_poisoned(driver.store, queued.to_json(), message_id="p", now=T0)

    assert report.disposition == "Dropped" and "created again" in report.reason
    assert poisoned.disposition == "Dropped"
    assert target.requests == [] and driver.history(new.history_key) == []
    assert driver.job(new.key).execution_count == 0


def test_the_new_incarnations_own_and_older_senders_messages_run(
    driver: Driver, target: HttpTarget
) -> None:
    _, new = _recreated(driver, target)

    own = driver.run(ExecutionMessage.scheduled(new.key, T0, 1, incarnation="second"))
    legacy = driver.run(ExecutionMessage.manual_run(new.key, now=T0))  # no incarnation

    assert (own.disposition, legacy.disposition) == ("Ran", "Ran")
    assert len(target.requests) == 2


def _claimed_early_then(driver: Driver, message: ExecutionMessage, meanwhile: Callable[[], None]):
    """Run `message` as its early delivery does (read 1.5 s before its second, claimed at
    it), calling `meanwhile` while the executor waits for that second."""
    driver.clock.now = message.occurrence - timedelta(seconds=1.5)

    def wait(seconds: float) -> None:
        until = driver.clock.now + timedelta(seconds=seconds)
        meanwhile()
        driver.clock.now = max(driver.clock.now, until)

    runtime = Runtime(driver.settings, clock=driver.clock, sleep=wait)
    return runtime.execute(message.to_json(), message_id=uuid.uuid4().hex, dequeue_count=1)


def _first(driver: Driver, target: HttpTarget) -> JobRecord:
    old = make_job(driver.store, http_action(target.url))
    return put_job(driver.store, replace(old, incarnation="first"), etag=old.etag)


def test_a_job_created_again_before_the_occurrences_second_runs_it_once(
    driver: Driver, target: HttpTarget
) -> None:
    """The soak's DELETE/PUT storm: the old job's message is read 1-2 s early; before the
    second the job is deleted and created again, so the new job's schedule holds that second
    too and its own message runs it. The occurrence runs once (for the job that exists at its
    second), not once per incarnation with the same x-ms-execution-tag."""
    old = _first(driver, target)
    reports = []

    def delete_and_create_again() -> None:
        delete_job(driver.store, driver.job(old.key), etag=driver.job(old.key).etag)
        new = replace(old, incarnation="second", etag=None, bookkeeping=Bookkeeping(occurrences=1))
        put_job(driver.store, new, create_only=True)
        own = ExecutionMessage.scheduled(old.key, T0, 1, incarnation="second")
        reports.append(_claimed_early_then(driver, own, lambda: None))

    stale = _claimed_early_then(
        driver, ExecutionMessage.scheduled(old.key, T0, 1, incarnation="first"),
        delete_and_create_again,
    )  # fmt: skip

    assert [r.disposition for r in reports] == ["Ran"]
    assert stale.disposition == "Dropped" and "created again" in stale.reason
    assert len(target.requests) == 1
    assert driver.job(old.key).execution_count == 1


def test_a_job_deleted_or_disabled_while_its_attempt_waits_does_not_run(
    driver: Driver, target: HttpTarget
) -> None:
    """(A collection disabled during the wait is not read again: test_execute_confirm.py.)"""
    deleted = _first(driver, target)
    gone = _claimed_early_then(
        driver, ExecutionMessage.scheduled(deleted.key, T0, 1, incarnation="first"),
        lambda: delete_job(driver.store, driver.job(deleted.key), etag=None),
    )  # fmt: skip
    disabled = _first(driver, target)
    message = ExecutionMessage.scheduled(disabled.key, T0, 1, incarnation="first")
    stopped = _claimed_early_then(
        driver, message,
        lambda: put_job(driver.store, replace(driver.job(disabled.key), state="Disabled")),
    )  # fmt: skip

    # Never claimed (its claim was to be taken at the second): enabled again, nothing of
    # this occurrence holds the job up.
    assert message.execution_tag not in executor_state(driver.job(disabled.key)).claims
    assert (gone.disposition, stopped.disposition) == ("Dropped",) * 2
    assert (gone.reason, stopped.reason) == ("the job no longer exists", "the job is Disabled")
    assert target.requests == []


def test_an_attempt_finishing_after_its_job_was_created_again_leaves_the_new_job_alone(
    driver: Driver, target: HttpTarget
) -> None:
    """A one-time job deleted while its action runs and created again (due later, already
    dispatched): the old attempt's result is not applied to the new job, which would then
    be marked Completed before its own occurrence ran (and lose it)."""
    old = _first(driver, target)
    message = ExecutionMessage.scheduled(old.key, T0, 1, incarnation="first")
    claimed = claim(driver.store, message, "m1", now=T0)
    assert not isinstance(claimed, Skip)
    delete_job(driver.store, driver.job(old.key), etag=None)
    later = T0 + timedelta(seconds=30)
    new = put_job(
        driver.store,
        replace(old, incarnation="second", etag=None, next_execution_time=None,
                bookkeeping=Bookkeeping(occurrences=1)),
        create_only=True,
    )  # fmt: skip
    done = Attempt(succeeded=True, started=T0, faulted_now=False, final=True)

    written = finish(driver.store, claimed[0], message, "m1", done, now=T0)

    assert driver.job(new.key).state == "Enabled" and driver.job(new.key).execution_count == 0
    assert written is None  # as for a job deleted: the executor requests its history's purge
    driver.clock.now = later - timedelta(seconds=1)
    own = driver.run(ExecutionMessage.scheduled(old.key, later, 1, incarnation="second"))
    assert own.disposition == "Ran" and driver.job(new.key).state == "Completed"
