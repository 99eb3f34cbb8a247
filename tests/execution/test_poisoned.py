"""Poisoned execution messages are recorded in their job's history and status (real Azurite):
the poison-queue function's logic, and the local host's poison worker end to end."""

from __future__ import annotations

from dataclasses import replace

from devtools import devhost
from scheduler_lib.config import Settings
from scheduler_lib.domain import JobDefinition
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution import lifecycle
from scheduler_lib.execution.poisoned import record_poisoned
from scheduler_lib.runtime import Runtime
from scheduler_lib.store.jobs import put_job
from tests.execution.harness import T0, Driver, FakeClock, http_action, make_job


def test_a_poisoned_message_is_a_failed_attempt_in_history_and_status_once(
    driver: Driver,
) -> None:
    job = make_job(driver.store, http_action("http://127.0.0.1:9/x"), next_execution_time=None)
    message = ExecutionMessage.scheduled(job.key, T0, 1)  # the job's last occurrence

    first = record_poisoned(driver.store, message.to_json(), message_id="m1", now=T0)
    again = record_poisoned(driver.store, message.to_json(), message_id="m1", now=T0)

    assert (first.disposition, again.disposition) == ("Recorded", "Dropped")
    [entry] = driver.history(job.key)
    assert (entry.status, entry.action_name, entry.repeat_count) == ("Failed", "MainAction", 1)
    assert entry.message.startswith("Poisoned:") and "poison queue" in entry.message
    after = driver.job(job.key)
    assert (after.execution_count, after.failure_count, after.faulted_count) == (1, 1, 1)
    # Its last occurrence is over: the job does not wait forever for it.
    assert after.state == "Faulted"
    claim = lifecycle.executor_state(after).claims[message.execution_tag]
    assert claim.final


def test_a_poisoned_message_without_a_job_or_not_a_message_is_dropped(driver: Driver) -> None:
    gone = ExecutionMessage.scheduled("s|rg|c|nojob", T0, 1).to_json()
    assert record_poisoned(driver.store, gone, message_id="m", now=T0).disposition == "Dropped"
    assert record_poisoned(driver.store, "junk", message_id="m", now=T0).disposition == "Dropped"


def test_the_local_host_poisons_a_failing_message_and_its_poison_worker_records_it(
    settings: Settings, driver: Driver
) -> None:
    job = make_job(driver.store, http_action("http://127.0.0.1:9/x"))
    # A stored job the executor cannot handle (no action): every delivery raises.
    no_action = JobDefinition({"startTime": T0.isoformat()})
    put_job(driver.store, replace(job, definition=no_action), etag=job.etag)
    runtime = Runtime(settings, clock=FakeClock(T0))
    runtime.queue.send(ExecutionMessage.scheduled(job.key, T0, 1), visible_at=T0, now=T0)
    [received] = runtime.queue.receive(max_messages=1)

    fifth = replace(received, dequeue_count=devhost.MAX_DEQUEUE_COUNT)
    devhost.process_message(runtime, fifth)
    [poisoned] = runtime.queue.receive(max_messages=1, poisoned=True)
    devhost.process_poisoned(runtime, poisoned)

    [entry] = driver.history(job.key)
    assert entry.status == "Failed" and entry.message.startswith("Poisoned:")
    assert driver.job(job.key).failure_count == 1
    assert runtime.queue.receive(max_messages=1, poisoned=True) == []
    assert runtime.queue.receive(max_messages=1) == []
