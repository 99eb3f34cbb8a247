"""A claim's lease and its watchdog (`execution/lease.py`): a worker that dies mid-attempt is
taken over within seconds (its queue message comes back only after the host's 10-minute
visibility timeout), a living worker never is, and the original message then finds the
attempt taken: a Duplicate.

Real Azurite tables and queue, a real local HTTP server, an injected clock. The watchdog
the executor sends is invisible for real seconds, so each visit is handed to the executor
as the queue trigger would hand it over (`ExecutionMessage.watching`, the executor's own
constructor of that body); the clock is moved past the lease instead of waited for."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import timedelta

import pytest

from scheduler_lib.domain.executor_state import step_claim
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution import claims, decide, lease, lifecycle
from scheduler_lib.execution.heartbeat import renew
from scheduler_lib.execution.poisoned import record_poisoned
from scheduler_lib.store.jobs import put_job
from tests.execution.harness import T0, Driver, http_action, make_job
from tests.execution.test_execute_dedupe import WorkerKilled
from tests.support.http_target import HttpTarget

PAST_LEASE = lease.LEASE + lease.MARGIN


class DyingSender:
    """A ServiceBusSender (no emulator runs here: the test stops at that boundary) whose
    worker dies inside the send the first `deaths` times, then sends."""

    def __init__(self, deaths: int = 1) -> None:
        self.deaths = deaths
        self.sent: list[object] = []

    def send_messages(self, message: object, timeout: float | None = None) -> None:
        if self.deaths:
            self.deaths -= 1
            raise WorkerKilled
        self.sent.append(message)


def service_bus_job(driver: Driver, sender: DyingSender):
    @contextmanager
    def sender_factory(_target: object) -> Iterator[DyingSender]:
        yield sender

    driver.adapters["sender_factory"] = sender_factory
    action = {
        "type": "ServiceBusQueue",
        "serviceBusQueueMessage": {
            "namespace": "contoso", "queueName": "q", "message": "m",
            "authentication": {"type": "SharedAccessKey", "sasKeyName": "k", "sasKey": "s"},
        },
    }  # fmt: skip
    return make_job(driver.store, action)


def claim_of(driver: Driver, message: ExecutionMessage):
    claim = step_claim(driver.job(message.job_key), message)
    assert claim is not None
    return claim


def test_an_attempt_whose_worker_died_is_taken_over_by_its_watchdog(driver: Driver) -> None:
    sender = DyingSender()
    job = service_bus_job(driver, sender)
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    with pytest.raises(WorkerKilled):
        driver.run(message, message_id="m1")
    assert driver.queue_length() == 1  # its watchdog, left in the queue
    claimed = claim_of(driver, message)
    assert claimed.lease_until is not None and not claimed.done

    driver.clock.advance(PAST_LEASE)
    first = driver.run(message.watching(), message_id="w1")
    assert (first.disposition, sender.sent) == ("Watching", [])
    assert "taken over unless renewed" in first.reason
    seen = claimed.lease_until.isoformat()
    driver.clock.advance(lease.CONFIRM)
    took = driver.run(message.watching(lease_seen=seen), message_id="w2")

    assert (took.disposition, took.reason) == ("Rerun", "Rerun: dequeue 1")
    assert len(sender.sent) == 1
    [entry] = driver.history(job.key)
    assert entry.status == "Completed" and entry.message.startswith("[Rerun] ")
    assert (entry.expected_execution_time, entry.retry_count) == (T0, 0)
    after = claim_of(driver, message)
    assert (after.message_id, after.takeovers, after.done, after.lease_until) == (
        "w2", 1, True, None,
    )  # fmt: skip
    assert after.started == claimed.started  # the attempt started when first claimed
    # The killed worker's own message, given back by the queue minutes later:
    original = driver.run(message, message_id="m1", dequeue_count=2)
    assert original.disposition == "Duplicate" and len(sender.sent) == 1
    assert driver.job(job.key).execution_count == 1


def test_a_living_worker_that_renews_its_lease_is_not_taken_over(
    driver: Driver, target: HttpTarget
) -> None:
    """Cut off from storage for a while (its renewals failed), the worker renews again once
    storage is back, before the watchdog's confirmation: the watchdog leaves it."""
    job = make_job(driver.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    put_job(driver.store, lifecycle.with_claim(job, message, "m1", now=T0), etag=job.etag)
    seen = claim_of(driver, message).lease_until
    assert seen is not None

    driver.clock.now = T0 + PAST_LEASE
    assert driver.run(message.watching(), message_id="w1").disposition == "Watching"
    assert renew(driver.store, message, "m1", driver.clock)  # the worker's heartbeat
    driver.clock.advance(lease.CONFIRM)
    look = driver.run(message.watching(lease_seen=seen.isoformat()), message_id="w2")

    assert look.disposition == "Watching" and "its worker holds it until" in look.reason
    assert target.requests == []
    assert claim_of(driver, message).message_id == "m1"


def test_a_watchdog_leaves_a_lease_that_has_not_run_out(driver: Driver, target: HttpTarget):
    job = make_job(driver.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    put_job(driver.store, lifecycle.with_claim(job, message, "m1", now=T0), etag=job.etag)
    driver.clock.now = T0 + timedelta(seconds=5)

    look = driver.run(message.watching(), message_id="w1")

    assert look.disposition == "Watching" and target.requests == []
    assert driver.queue_length() == 1  # it comes back when the lease ends


def test_a_watchdog_of_an_attempt_that_ended_does_nothing(
    driver: Driver, target: HttpTarget
) -> None:
    job = make_job(driver.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    assert driver.run(message, message_id="m1").disposition == "Ran"
    assert driver.queue_length() == 0  # the attempt deleted its watchdog
    assert claim_of(driver, message).lease_until is None
    driver.clock.advance(timedelta(minutes=1))

    look = driver.run(message.watching(), message_id="w1")

    assert (look.disposition, look.reason) == ("Watched", "the attempt is over")
    assert len(target.requests) == 1 and driver.queue_length() == 0


def test_of_two_watchdogs_that_confirm_at_once_one_takes_the_attempt_over(
    driver: Driver, target: HttpTarget
) -> None:
    """Both looked at the same expired lease; the claim is conditional on it, so the one
    that claims second finds the step under the first one's id."""
    job = make_job(driver.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    put_job(driver.store, lifecycle.with_claim(job, message, "m1", now=T0), etag=job.etag)
    seen = claim_of(driver, message).lease_until
    assert seen is not None
    driver.clock.now = T0 + PAST_LEASE + lease.CONFIRM
    stale = lease.Takeover("m1", seen)

    one = claims.claim(driver.store, message, "w1", now=driver.clock(), takeover=stale)
    two = claims.claim(driver.store, message, "w2", now=driver.clock(), takeover=stale)

    assert not isinstance(one, claims.Skip) and one[1] is decide.Verdict.RERUN
    assert two == claims.Skip("Duplicate", "another message for this attempt was already taken")
    assert claim_of(driver, message).message_id == "w1"


def test_a_step_taken_over_too_often_is_left_to_the_queue(
    driver: Driver, target: HttpTarget
) -> None:
    job = make_job(driver.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    claimed = lifecycle.with_claim(job, message, "m1", now=T0)
    state = lifecycle.executor_state(claimed)
    tired = replace(state.claims[message.execution_tag], takeovers=lease.MAX_TAKEOVERS)
    state = replace(state, claims={message.execution_tag: tired})
    put_job(driver.store, lifecycle.with_state(claimed, state), etag=job.etag)
    driver.clock.now = T0 + timedelta(minutes=5)

    look = driver.run(message.watching(), message_id="w1")

    assert look.disposition == "Watched" and "left to the queue" in look.reason
    assert target.requests == [] and driver.queue_length() == 0


def test_a_claim_written_before_leases_is_left_to_the_queue_as_before(
    driver: Driver, target: HttpTarget
) -> None:
    """A claim from before this version has no lease: no watchdog takes it over, and the
    redelivered message reruns it, as it always did."""
    job = make_job(driver.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    claimed = lifecycle.with_claim(job, message, "m1", now=T0)
    state = lifecycle.executor_state(claimed)
    old = replace(state.claims[message.execution_tag], lease_until=None)
    state = replace(state, claims={message.execution_tag: old})
    put_job(driver.store, lifecycle.with_state(claimed, state), etag=job.etag)
    driver.clock.now = T0 + timedelta(minutes=10)

    assert driver.run(message.watching(), message_id="w1").disposition == "Watched"
    assert driver.run(message, message_id="m1", dequeue_count=2).disposition == "Rerun"
    assert len(target.requests) == 1


def test_a_renewal_stops_once_the_claim_is_no_longer_the_workers(
    driver: Driver, target: HttpTarget
) -> None:
    job = make_job(driver.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    put_job(driver.store, lifecycle.with_claim(job, message, "m1", now=T0), etag=job.etag)

    renewed_at = driver.clock.now  # the fake clock's next reading
    assert renew(driver.store, message, "m1", driver.clock)
    assert claim_of(driver, message).lease_until == renewed_at + lease.LEASE
    assert not renew(driver.store, message, "w9", driver.clock)  # not this worker's


def test_a_poisoned_watchdog_that_took_nothing_over_is_dropped(
    driver: Driver, target: HttpTarget
) -> None:
    job = make_job(driver.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    put_job(driver.store, lifecycle.with_claim(job, message, "m1", now=T0), etag=job.etag)

    report = record_poisoned(
        driver.store, message.watching().to_json(), message_id="w1", now=T0 + timedelta(hours=1)
    )

    assert report.disposition == "Dropped" and driver.history(job.key) == []
