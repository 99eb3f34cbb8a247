"""Extension 2 (concurrencyPolicy) in the executor: the real Runtime on a hand-moved clock,
real Azurite, and a slow real HTTP target. The slow occurrence runs in a thread whose request
the target holds until the test releases it (an Event, not a timer), so "still running" is
a fact the test controls; the test waits on the target having the request, never sleeps."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from scheduler_lib.domain import JobDefinition, JobRecord
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution import claims
from scheduler_lib.execution.execute import ExecutionReport
from scheduler_lib.store.jobs import put_job
from tests.execution.harness import T0, Driver, http_action, make_job
from tests.support.http_target import HttpTarget, RecordedRequest

MINUTE = timedelta(minutes=1)


class Held:
    """An occurrence whose request the target holds until `release()`."""

    def __init__(self, driver: Driver, target: HttpTarget, message: ExecutionMessage) -> None:
        self.gate = threading.Event()
        self.report: ExecutionReport | None = None

        def answer(request: RecordedRequest) -> str:
            assert self.gate.wait(timeout=30), "the test never released the held request"
            return "finally"

        target.reply(200, answer, path="/slow", times=1)
        self.thread = threading.Thread(target=self._run, args=(driver, message), daemon=True)
        self.thread.start()
        target.wait_for_requests(len(target.requests) + 1)

    def _run(self, driver: Driver, message: ExecutionMessage) -> None:
        self.report = driver.run(message)

    def release(self) -> ExecutionReport:
        self.gate.set()
        self.thread.join(timeout=30)
        assert self.report is not None
        return self.report


@pytest.fixture
def slow(target: HttpTarget) -> Iterator[str]:
    yield target.url_for("/slow")


def job_with(driver: Driver, url: str, policy: str | None, **action: Any) -> JobRecord:
    """A job whose stored definition has `concurrencyPolicy` (as the API stores it)."""
    record = make_job(driver.store, http_action(url, **action))
    if policy is None:
        return record
    definition = {**record.definition.document, "concurrencyPolicy": policy}
    changed = replace(record, definition=JobDefinition(definition))
    return put_job(driver.store, changed, etag=record.etag)


def occurrence(job_key: str, n: int) -> ExecutionMessage:
    return ExecutionMessage.scheduled(job_key, T0 + (n - 1) * MINUTE, n)


def test_forbid_skips_an_occurrence_due_while_the_previous_one_runs(
    driver: Driver, target: HttpTarget, slow: str
) -> None:
    job = job_with(driver, slow, "Forbid")
    held = Held(driver, target, occurrence(job.key, 1))

    driver.clock.now = T0 + MINUTE
    second = driver.run(occurrence(job.key, 2))
    assert second.disposition == "Skipped"
    assert len(target.requests) == 1  # the second never called the target
    first = held.release()
    assert first.history is not None and first.history.status == "Completed"

    driver.clock.now = T0 + 2 * MINUTE
    assert driver.run(occurrence(job.key, 3)).disposition == "Ran"  # nothing runs now
    history = driver.history(job.key)
    statuses = sorted((h.repeat_count, h.status) for h in history)
    assert statuses == [(1, "Completed"), (2, "Skipped"), (3, "Completed")]
    [skipped] = [h for h in history if h.status == "Skipped"]
    assert skipped.expected_execution_time == T0 + MINUTE
    assert "still running" in skipped.message and "Forbid" in skipped.message
    after = driver.job(job.key)
    assert after.execution_count == 2  # the skipped one is not counted


def test_forbid_counts_a_pending_retry_as_running(driver: Driver, target: HttpTarget) -> None:
    target.reply(500, "down", times=1)
    job = job_with(driver, target.url, "Forbid")
    failed = driver.run(occurrence(job.key, 1))
    assert failed.follow_up is not None  # its retry waits in the queue

    driver.clock.now = T0 + MINUTE
    assert driver.run(occurrence(job.key, 2)).disposition == "Skipped"
    driver.clock.now = failed.follow_up_at or driver.clock.now
    assert driver.run(failed.follow_up).history.status == "Completed"
    driver.clock.now = T0 + 2 * MINUTE
    assert driver.run(occurrence(job.key, 3)).disposition == "Ran"


def test_allow_is_the_default_and_runs_alongside(
    driver: Driver, target: HttpTarget, slow: str
) -> None:
    job = job_with(driver, slow, None)
    held = Held(driver, target, occurrence(job.key, 1))
    driver.clock.now = T0 + MINUTE
    target.reply(200, "quick", path="/slow", times=1)
    assert driver.run(occurrence(job.key, 2)).disposition == "Ran"
    held.release()
    assert len(target.requests) == 2


def test_buffer_one_runs_one_waiting_occurrence_when_the_previous_ends(
    driver: Driver, target: HttpTarget, slow: str
) -> None:
    job = job_with(driver, slow, "BufferOne")
    held = Held(driver, target, occurrence(job.key, 1))

    driver.clock.now = T0 + MINUTE
    assert driver.run(occurrence(job.key, 2)).disposition == "Buffered"
    driver.clock.now = T0 + 2 * MINUTE
    assert driver.run(occurrence(job.key, 3)).disposition == "Skipped"  # one waits already
    assert len(target.requests) == 1 and driver.queued() == []

    driver.clock.now = T0 + 30 * MINUTE  # far past the grace period: still not late
    held.release()
    [waiting] = driver.queued()  # sent by the executor that finished the first, visible now
    assert (waiting.occurrence, waiting.buffered) == (T0 + MINUTE, True)
    ran = driver.run(waiting)
    assert ran.disposition == "Ran" and ran.history is not None
    assert ran.history.status == "Completed"
    assert ran.history.expected_execution_time == T0 + MINUTE
    assert ran.history.start_time >= T0 + 30 * MINUTE
    # Its tag is the occurrence's own, as if it had run on time.
    tag = occurrence(job.key, 2).execution_tag
    assert target.requests[-1].header("x-ms-execution-tag") == tag
    statuses = sorted((h.repeat_count, h.status) for h in driver.history(job.key))
    assert statuses == [(1, "Completed"), (2, "Completed"), (3, "Skipped")]
    assert driver.job(job.key).bookkeeping.executor.buffered is None
    driver.clock.now = T0 + 31 * MINUTE
    later = ExecutionMessage.scheduled(job.key, T0 + 31 * MINUTE, 4)
    assert driver.run(later).disposition == "Ran"  # nothing runs or waits any more


def test_a_manual_run_neither_counts_nor_waits(
    driver: Driver, target: HttpTarget, slow: str
) -> None:
    job = job_with(driver, slow, "Forbid")
    held = Held(driver, target, ExecutionMessage.manual_run(job.key, now=T0))
    driver.clock.now = T0 + MINUTE
    target.reply(200, "quick", path="/slow", times=1)
    assert driver.run(occurrence(job.key, 2)).disposition == "Ran"
    held.release()


def test_a_redelivered_skip_writes_one_entry_and_does_not_run(
    driver: Driver, target: HttpTarget
) -> None:
    target.reply(500, "down", times=1)
    job = job_with(driver, target.url, "Forbid")
    failed = driver.run(occurrence(job.key, 1))  # its retry is pending: it still runs
    assert failed.follow_up is not None

    driver.clock.now = T0 + MINUTE
    second = occurrence(job.key, 2)
    # A worker claimed the second and died before closing its skip (its claim open): the
    # queue redelivers it under the same message id.
    claimed = claims.claim(driver.store, second, "msg-2", now=driver.clock())
    assert not isinstance(claimed, claims.Skip)
    assert driver.run(second, message_id="msg-2").disposition == "Skipped"
    assert driver.run(second, message_id="msg-2").disposition == "Duplicate"
    skipped = [h for h in driver.history(job.key) if h.status == "Skipped"]
    assert len(skipped) == 1 and len(target.requests) == 1
