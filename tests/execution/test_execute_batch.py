"""A batch message (`domain/messages.py` `batch_json`): occurrences that start in the same
second in one queue message, run by one invocation, each member as if delivered alone under
its `member_id`, all at once so that their waits for the second overlap.

Real Azurite tables and queues and a real local HTTP server, through the worker's real
composition root (`Runtime.execute_queued`, what the queue trigger calls). The members'
wait goes through `WaitTogether` (no test sleeps): it lets the members go on only once all
of them wait at once, so members waiting one after the other fail the test. Every assertion
runs after the invocation returned or raised, i.e. once every member's thread ended.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest
from azure.core.exceptions import ServiceRequestError

from devtools import devhost
from scheduler_lib.domain import JobDefinition, Outcome
from scheduler_lib.domain.messages import ExecutionMessage, batch_json
from scheduler_lib.errors import ValidationError
from scheduler_lib.execution import claims, lifecycle
from scheduler_lib.metrics import catalog
from scheduler_lib.store.jobs import delete_job, put_job
from tests.execution.harness import T0, Driver, FakeClock, http_action, make_job
from tests.metrics.support import stored, value
from tests.support.http_target import HttpTarget

#: Real seconds a member waits for the others before the test fails (a guard: it never
#: passes on time; members that wait together meet at once).
GUARD = 20.0


class WaitTogether:
    """The executor's `sleep` for members delivered early: a member's wait ends only once
    `parties` members wait at once; then the clock moves to the latest instant they wait
    for, and all go on (`met`: how many waited at once)."""

    def __init__(self, clock: FakeClock, parties: int) -> None:
        self.clock = clock
        self.until: list[datetime] = []
        self.met = 0
        self._lock = threading.Lock()
        self._barrier = threading.Barrier(parties, action=self._release, timeout=GUARD)

    def __call__(self, seconds: float) -> None:
        with self._lock:
            self.until.append(self.clock.now + timedelta(seconds=seconds))
        self._barrier.wait()

    def _release(self) -> None:
        self.met = len(self.until)
        self.clock.advance(max(self.until) - self.clock.now)


@pytest.fixture
def fine_clock(driver: Driver) -> FakeClock:
    """A clock that moves 1 ms a reading: members reading it from several threads do not
    carry it past their second before they wait for it."""
    driver.clock.tick = timedelta(milliseconds=1)
    return driver.clock


def _jobs(driver: Driver, url: str, count: int) -> list[Any]:
    return [make_job(driver.store, http_action(url), name=f"Job-{i}") for i in range(count)]


def _claim_owner(driver: Driver, message: ExecutionMessage) -> str:
    claim = lifecycle.executor_state(driver.job(message.job_key)).claims[message.execution_tag]
    return claim.message_id


def test_three_jobs_due_at_one_second_run_in_one_invocation_of_one_queue_message(
    driver: Driver, target: HttpTarget, fine_clock: FakeClock
) -> None:
    jobs = _jobs(driver, target.url, 3)
    messages = [ExecutionMessage.scheduled(job.key, T0, 1, job.incarnation) for job in jobs]
    fine_clock.now = T0 + timedelta(milliseconds=500)
    queue = driver.runtime.queue
    queue.send_body(batch_json(messages))
    [received] = queue.receive(max_messages=32, visibility_timeout=60)

    reports = driver.runtime.execute_queued(
        received.body, message_id=received.id, dequeue_count=received.dequeue_count
    )
    queue.delete(received)

    assert [report.disposition for report in reports] == ["Ran"] * 3
    assert [report.job_key for report in reports] == [job.key for job in jobs]
    assert len(target.requests) == 3
    for index, message in enumerate(messages):
        [entry] = driver.history(message.job_key)
        assert (entry.status, entry.repeat_count) == ("Completed", 1)
        assert _claim_owner(driver, message) == f"{received.id}#{index}"
    assert queue.receive(max_messages=32) == []
    driver.runtime.flush_metrics(due_only=False)
    counted = stored(driver.store, now=fine_clock.now)  # each member observed
    assert value(counted, catalog.OCCURRENCES, outcome=Outcome.COMPLETED) == 3
    assert value(counted, catalog.ATTEMPTS, outcome="Completed") == 3


def test_members_delivered_early_wait_for_their_second_together(
    driver: Driver, target: HttpTarget, fine_clock: FakeClock
) -> None:
    """The batch is held once: the three waits overlap (one after the other, the first
    would wait alone and the guard fail it), and each action starts at the second."""
    jobs = _jobs(driver, target.url, 3)
    messages = [ExecutionMessage.scheduled(job.key, T0, 1, job.incarnation) for job in jobs]
    fine_clock.now = T0 - timedelta(seconds=1.5)  # the queue delivers it early
    together = WaitTogether(fine_clock, parties=3)
    driver.runtime.executor = replace(driver.runtime.executor, sleep=together)

    reports = driver.run_batch(messages)

    assert [report.disposition for report in reports] == ["Ran"] * 3
    assert together.met == 3
    for message in messages:
        [entry] = driver.history(message.job_key)
        assert T0 <= entry.start_time < T0 + timedelta(seconds=1)
    assert fine_clock.now < T0 + timedelta(seconds=1)  # held 1.5 s in all, not 4.5 s


def test_two_occurrences_of_one_job_in_one_batch_both_run_once(
    driver: Driver, target: HttpTarget, fine_clock: FakeClock
) -> None:
    """The same job twice (its occurrence of the minute before, started 60 s later by its
    jitter, and this minute's): two claims on one entity at once, each run and counted."""
    job = make_job(driver.store, http_action(target.url), occurrences=0)
    earlier = ExecutionMessage.scheduled(
        job.key, T0 - timedelta(minutes=1), 1, job.incarnation, start=T0
    )
    messages = [earlier, ExecutionMessage.scheduled(job.key, T0, 2, job.incarnation)]
    fine_clock.now = T0 + timedelta(milliseconds=500)

    reports = driver.run_batch(messages)

    assert [report.disposition for report in reports] == ["Ran", "Ran"]
    assert sorted(entry.repeat_count for entry in driver.history(job.key)) == [1, 2]
    assert len(target.requests) == 2
    assert driver.job(job.key).execution_count == 2
    assert [_claim_owner(driver, message) for message in messages] == ["batch-1#0", "batch-1#1"]

    again = driver.run_batch(messages, dequeue_count=2)

    assert [report.disposition for report in again] == ["Duplicate", "Duplicate"]
    assert len(target.requests) == 2


def test_a_batch_delivered_again_after_it_ran_is_all_duplicates(
    driver: Driver, target: HttpTarget, fine_clock: FakeClock
) -> None:
    """The host redelivers a batch whose invocation completed but was not deleted: each
    member's claim, under its member id, says its attempt already ran."""
    jobs = _jobs(driver, target.url, 3)
    messages = [ExecutionMessage.scheduled(job.key, T0, 1, job.incarnation) for job in jobs]
    fine_clock.now = T0 + timedelta(milliseconds=500)
    driver.run_batch(messages, message_id="q-1")

    again = driver.run_batch(messages, message_id="q-1", dequeue_count=2)

    assert [(r.disposition, r.reason) for r in again] == [
        ("Duplicate", "the occurrence already finished")
    ] * 3
    assert len(target.requests) == 3
    assert all(len(driver.history(job.key)) == 1 for job in jobs)


def test_a_member_that_fails_stops_no_other_and_alone_runs_on_redelivery(
    driver: Driver, target: HttpTarget, fine_clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Storage fails the first member's claim: the two others still run to their end and
    are observed, then the invocation raises; the batch redelivered, they are Duplicates
    and the failed one runs, once."""
    jobs = _jobs(driver, target.url, 3)
    messages = [ExecutionMessage.scheduled(job.key, T0, 1, job.incarnation) for job in jobs]
    fine_clock.now = T0 + timedelta(milliseconds=500)
    failed: list[str] = []
    claim = claims.claim

    def storage_down_once(store: Any, message: ExecutionMessage, *args: Any, **kw: Any) -> Any:
        if message.job_key == jobs[0].key and not failed:
            failed.append(message.job_key)
            raise ServiceRequestError("storage unreachable")
        return claim(store, message, *args, **kw)

    monkeypatch.setattr(claims, "claim", storage_down_once)

    with pytest.raises(ExceptionGroup) as raised:
        driver.run_batch(messages, message_id="q-1")

    [error] = raised.value.exceptions
    assert isinstance(error, ServiceRequestError)
    assert driver.history(jobs[0].key) == []
    assert [len(driver.history(job.key)) for job in jobs[1:]] == [1, 1]
    driver.runtime.flush_metrics(due_only=False)
    counted = stored(driver.store, now=fine_clock.now)  # the two that ran were observed
    assert value(counted, catalog.OCCURRENCES, outcome=Outcome.COMPLETED) == 2

    again = driver.run_batch(messages, message_id="q-1", dequeue_count=2)

    assert [report.disposition for report in again] == ["Ran", "Duplicate", "Duplicate"]
    assert [len(driver.history(job.key)) for job in jobs] == [1, 1, 1]
    assert len(target.requests) == 3


def test_a_member_whose_job_was_deleted_is_dropped_while_the_others_run(
    driver: Driver, target: HttpTarget, fine_clock: FakeClock
) -> None:
    jobs = _jobs(driver, target.url, 3)
    messages = [ExecutionMessage.scheduled(job.key, T0, 1, job.incarnation) for job in jobs]
    delete_job(driver.store, jobs[1])
    fine_clock.now = T0 + timedelta(milliseconds=500)

    reports = driver.run_batch(messages)

    assert [(r.disposition, r.reason) for r in reports] == [
        ("Ran", "Run: dequeue 1"),
        ("Dropped", "the job no longer exists"),
        ("Ran", "Run: dequeue 1"),
    ]
    assert len(target.requests) == 2


def test_a_poisoned_batch_is_recorded_in_each_members_own_job(driver: Driver) -> None:
    jobs = _jobs(driver, "http://127.0.0.1:9/x", 3)
    messages = [ExecutionMessage.scheduled(job.key, T0, 1, job.incarnation) for job in jobs]

    reports = driver.runtime.record_poisoned(batch_json(messages), message_id="p")

    assert [report.disposition for report in reports] == ["Recorded"] * 3
    for index, message in enumerate(messages):
        [entry] = driver.history(message.job_key)
        assert entry.status == "Failed" and entry.message.startswith("Poisoned:")
        assert _claim_owner(driver, message) == f"p#{index}"
    again = driver.runtime.record_poisoned(batch_json(messages), message_id="p")
    assert [report.disposition for report in again] == ["Dropped"] * 3


def test_the_local_host_poisons_a_batch_after_five_dequeues_and_records_only_what_failed(
    driver: Driver, target: HttpTarget, fine_clock: FakeClock
) -> None:
    """A member whose stored job the executor cannot handle (no action) raises at every
    delivery; the two others ran at the first. At the fifth dequeue the local host moves the
    batch to the poison queue, and its poison worker records the failed member in its job;
    the others' occurrences are over already and stay as they ran."""
    jobs = _jobs(driver, target.url, 3)
    broken = jobs[2]
    no_action = JobDefinition({"startTime": T0.isoformat()})
    put_job(driver.store, replace(broken, definition=no_action), etag=broken.etag)
    messages = [ExecutionMessage.scheduled(job.key, T0, 1, job.incarnation) for job in jobs]
    fine_clock.now = T0 + timedelta(milliseconds=500)
    runtime = driver.runtime
    runtime.queue.send_body(batch_json(messages))
    [received] = runtime.queue.receive(max_messages=1, visibility_timeout=60)
    with pytest.raises(ExceptionGroup):
        runtime.execute_queued(received.body, message_id=received.id, dequeue_count=1)

    devhost.process_message(runtime, replace(received, dequeue_count=devhost.MAX_DEQUEUE_COUNT))
    [poisoned] = runtime.queue.receive(max_messages=1, poisoned=True)
    devhost.process_poisoned(runtime, poisoned)

    [entry] = driver.history(broken.key)
    assert entry.status == "Failed" and entry.message.startswith("Poisoned:")
    for job in jobs[:2]:
        [ran] = driver.history(job.key)
        assert ran.status == "Completed"
    assert len(target.requests) == 2
    assert runtime.queue.receive(max_messages=1, poisoned=True) == []
    assert runtime.queue.receive(max_messages=1) == []


def test_a_malformed_batch_is_a_validation_error_before_any_member_runs(
    driver: Driver, target: HttpTarget
) -> None:
    job = make_job(driver.store, http_action(target.url))
    good = ExecutionMessage.scheduled(job.key, T0, 1, job.incarnation).to_json()
    body = f'{{"v":1,"batch":[{good},{{"job_key":"x"}}]}}'
    with pytest.raises(ValidationError):
        driver.runtime.execute_queued(body, message_id="m", dequeue_count=1)
    assert target.requests == []
