"""De-duplication against real Azurite and a real HTTP server: duplicate messages, a worker
that dies mid-action, and messages that arrive out of order."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import timedelta

import pytest

from scheduler_lib.domain import JobRecord
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution import claims, lifecycle
from scheduler_lib.store.etag import ContentionError
from scheduler_lib.store.jobs import put_job
from scheduler_lib.store.tables import TableStore
from tests.execution.harness import (
    T0,
    Driver,
    http_action,
    make_job,
)
from tests.support.http_target import HttpTarget


def test_a_duplicate_message_of_the_same_occurrence_runs_once(
    driver: Driver, target: HttpTarget
) -> None:
    """A dispatcher tick that crashed after sending re-sends the same occurrence (same tag)
    under a new queue message id."""
    job = make_job(driver.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1)

    first = driver.run(message, message_id="m-1")
    again = driver.run(ExecutionMessage.scheduled(job.key, T0, 1), message_id="m-2")

    assert (first.disposition, again.disposition) == ("Ran", "Duplicate")
    assert again.reason == "the occurrence already finished"
    assert len(target.requests) == 1
    assert len(driver.history(job.key)) == 1
    assert driver.job(job.key).execution_count == 1


def test_the_same_message_delivered_again_after_it_finished_is_skipped(
    driver: Driver, target: HttpTarget
) -> None:
    """The host may redeliver a message whose function completed but was not deleted."""
    target.reply(500)
    job = make_job(driver.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1)

    driver.run(message, message_id="m-1")
    redelivered = driver.run(message, message_id="m-1", dequeue_count=2)

    assert (redelivered.disposition, redelivered.reason) == (
        "Duplicate", "this attempt already ran",
    )  # fmt: skip
    assert len(target.requests) == 1


def _worker_dies_after_claiming(driver: Driver, message: ExecutionMessage, message_id: str):
    """What a worker killed mid-action leaves behind: the claim written, nothing else (no
    history, no counters, no follow-up). Written with the executor's own claim function."""
    record = driver.job(message.job_key)
    claimed = lifecycle.with_claim(record, message, message_id, now=driver.clock.now)
    return put_job(driver.store, claimed, etag=record.etag)


def test_a_worker_killed_mid_action_runs_again_on_redelivery(
    driver: Driver, target: HttpTarget
) -> None:
    job = make_job(driver.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    _worker_dies_after_claiming(driver, message, "m-1")
    driver.clock.advance(timedelta(minutes=5))  # the message's visibility timeout runs out

    other = driver.run(message, message_id="m-2")  # a duplicate send of the same occurrence
    redelivered = driver.run(message, message_id="m-1", dequeue_count=2)

    assert (other.disposition, other.reason) == (
        "Duplicate", "another message for this attempt was already taken",
    )  # fmt: skip
    assert redelivered.disposition == "Rerun"
    assert redelivered.reason == "Rerun: dequeue 2"
    [request] = target.requests
    assert request.header("x-ms-execution-tag") == message.execution_tag
    [entry] = driver.history(job.key)
    assert entry.status == "Completed"
    assert driver.job(job.key).execution_count == 1


def test_messages_out_of_order_never_run_an_earlier_step_again(
    driver: Driver, target: HttpTarget
) -> None:
    target.reply(500, times=1)
    job = make_job(driver.store, http_action(target.url))
    first = ExecutionMessage.scheduled(job.key, T0, 1)
    retry = driver.run(first, message_id="m-1").follow_up
    assert driver.run(retry, message_id="m-2").disposition == "Ran"

    late_duplicate = driver.run(first, message_id="m-3")
    late_retry_duplicate = driver.run(retry, message_id="m-4")

    assert late_duplicate.disposition == late_retry_duplicate.disposition == "Duplicate"
    assert len(target.requests) == 2


def test_a_retry_arriving_while_the_previous_attempt_finishes_is_not_overwritten(
    driver: Driver, target: HttpTarget
) -> None:
    """The claim of attempt 1 is taken before attempt 0's worker marks its claim done: the
    worker of attempt 0 must not clobber it (only its own claim is marked)."""
    job = make_job(driver.store, http_action(target.url))
    first = ExecutionMessage.scheduled(job.key, T0, 1)
    record = driver.job(job.key)
    record = put_job(
        driver.store, lifecycle.with_claim(record, first, "m-1", now=T0), etag=record.etag
    )
    retry = first.next_attempt()
    record = put_job(
        driver.store, lifecycle.with_claim(record, retry, "m-2", now=T0), etag=record.etag
    )
    after = lifecycle.with_attempt(
        record, first, "m-1", succeeded=False, started=T0, faulted_now=False, final=False, now=T0
    )
    claim = lifecycle.executor_state(after).claims[first.execution_tag]
    assert (claim.attempt, claim.message_id, claim.done) == (1, "m-2", False)

    put_job(driver.store, after, etag=record.etag)
    assert driver.run(retry, message_id="m-2", dequeue_count=2).disposition == "Rerun"
    assert len(target.requests) == 1


def test_manual_runs_are_never_duplicates_of_each_other(driver: Driver, target: HttpTarget) -> None:
    job = make_job(driver.store, http_action(target.url))
    one = driver.run(ExecutionMessage.manual_run(job.key, now=T0))
    two = driver.run(ExecutionMessage.manual_run(job.key, now=T0))

    assert one.disposition == two.disposition == "Ran"
    assert len({r.header("x-ms-execution-tag") for r in target.requests}) == 2


class WorkerKilled(BaseException):
    """Stands for the process dying: nothing in the executor catches a BaseException."""


def test_a_worker_killed_inside_the_action_call_runs_again_on_redelivery(
    driver: Driver,
) -> None:
    """The worker really dies inside the action (a Service Bus send; no emulator runs here, so
    the test stops at the ServiceBusSender boundary): the claim is left behind, not done."""
    sent: list[object] = []
    dying = [True]

    class Sender:
        def send_messages(self, message: object, timeout: float | None = None) -> None:
            if dying[0]:
                raise WorkerKilled
            sent.append(message)

    @contextmanager
    def sender_factory(_target: object) -> Iterator[Sender]:
        yield Sender()

    driver.adapters["sender_factory"] = sender_factory
    action = {
        "type": "ServiceBusQueue",
        "serviceBusQueueMessage": {
            "namespace": "contoso", "queueName": "q", "message": "m",
            "authentication": {"type": "SharedAccessKey", "sasKeyName": "k", "sasKey": "s"},
        },
    }  # fmt: skip
    job = make_job(driver.store, action)
    message = ExecutionMessage.scheduled(job.key, T0, 1)

    with pytest.raises(WorkerKilled):
        driver.run(message, message_id="m-1")
    dying[0] = False
    assert driver.history(job.key) == [] and driver.job(job.key).execution_count == 0

    assert driver.run(message, message_id="m-2").disposition == "Duplicate"
    assert driver.run(message, message_id="m-1", dequeue_count=2).disposition == "Rerun"
    assert len(sent) == 1
    assert [e.status for e in driver.history(job.key)] == ["Completed"]


@pytest.mark.parametrize("status", [200, 500])
def test_an_attempt_whose_result_could_not_be_written_is_not_run_again(
    driver: Driver, target: HttpTarget, monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    """The job keeps changing while the executor writes the attempt's result: another writer
    (a real write to the same entity) gets in before each of its ETag-conditional writes, so
    `finish` gives up and the message is redelivered. The action already ran and its history
    entry is written: the redelivery records the result, it does not call the target again
    (at-least-once is only for a worker that died inside the action)."""
    target.reply(status)
    job = make_job(driver.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    real_put = claims.put_job

    def another_writer_first(store: TableStore, record: JobRecord, **kwargs: object) -> JobRecord:
        claim = lifecycle.executor_state(record).claims.get(message.execution_tag)
        if claim is not None and claim.done:  # the attempt's result, not its claim
            current = driver.job(record.key)
            touched = replace(current.bookkeeping, other={"other": uuid.uuid4().hex})
            real_put(store, replace(current, bookkeeping=touched))
        return real_put(store, record, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(claims, "put_job", another_writer_first)
    with pytest.raises(ContentionError):  # a redelivery, not a 412
        driver.run(message, message_id="m-1")
    monkeypatch.undo()
    redelivered = driver.run(message, message_id="m-1", dequeue_count=2)

    assert len(target.requests) == 1
    assert redelivered.disposition == "Recorded"
    stored = driver.job(job.key)
    assert (stored.execution_count, stored.failure_count) == (1, int(status == 500))
    claim = lifecycle.executor_state(stored).claims[message.execution_tag]
    assert claim.done and claim.final == (status == 200)
    # A failed attempt's retry is sent again (an identical message: the claims run it once).
    assert redelivered.follow_up == (message.next_attempt() if status == 500 else None)
    [entry] = driver.history(job.key)
    assert entry.status == ("Completed" if status == 200 else "Failed")
