"""A message queued for a job that was then deleted and created again under the same name is
not run against the new job, nor recorded in its history (real Azurite, real HTTP target)."""

from __future__ import annotations

from dataclasses import replace

from scheduler_lib.execution.messages import ExecutionMessage
from scheduler_lib.execution.poisoned import record_poisoned
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
