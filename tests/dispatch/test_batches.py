"""Occurrences that become visible in the same second go out as one batch queue message
(`dispatch/batch.py`). Real Azurite tables and queue: what is already due is read back from
the queue itself (`parse_body`), what is due later is counted on it (`depth`) and read in
the bodies `RecordingQueue` really sent. One shard (`shards(1)`): a batch is per shard."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import timedelta

import pytest

from scheduler_lib.config import Settings
from scheduler_lib.dispatch.tick import run_tick
from scheduler_lib.domain.messages import BATCH_LIMIT, ExecutionMessage, parse_body
from scheduler_lib.precision import Precision
from scheduler_lib.store.dispatcher_state import get_dispatcher_state
from scheduler_lib.store.tables import TableStore
from tests.dispatch.support import (
    T0,
    RecordingQueue,
    all_rows,
    definition,
    make_job,
    make_jobs,
    recreated_on_send,
    reload,
    set_job,
)

pytestmark = pytest.mark.shards(1)

LATER = T0 + timedelta(seconds=30)


def _received(queue: RecordingQueue) -> list[list[ExecutionMessage]]:
    """Every visible queue message's occurrences, taken from the queue."""
    return [parse_body(m.body) for m in queue.receive(max_messages=32, visibility_timeout=60)]


def test_jobs_due_in_the_same_second_are_one_queue_message(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    jobs = make_jobs(store, 5, T0)

    report = run_tick(store, queue, settings, now=T0 + timedelta(seconds=1))

    [members] = _received(queue)
    assert sorted(members, key=lambda m: m.job_key) == [
        ExecutionMessage.scheduled(j.key, T0, 1) for j in jobs
    ]
    assert (report.messages_sent, report.queue_sends) == (5, 1)
    stored = get_dispatcher_state(store).last_tick  # the stored tick summary
    assert stored.counts["queue_sends"] == 1
    nxt = T0 + timedelta(hours=1)
    assert [reload(store, j).next_execution_time for j in jobs] == [nxt] * 5
    assert all_rows(store) == sorted((j.key, nxt) for j in jobs)


def test_jobs_due_in_different_seconds_are_different_messages(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    """Three jobs at :30, two at :31 and one alone at :45: three queue messages, the lone
    one exactly as it was sent before batches."""
    seconds = [30, 30, 30, 31, 31, 45]
    jobs = [make_job(store, f"j{i}", definition(T0 + timedelta(seconds=s)))
            for i, s in enumerate(seconds)]  # fmt: skip

    report = run_tick(store, queue, settings, now=T0)

    assert queue.depth() == 3
    by_message = [
        sorted((m.job_key[-2:], m.occurrence.second) for m in parse_body(b)) for b in queue.bodies
    ]
    assert sorted(by_message) == [
        [("j0", 30), ("j1", 30), ("j2", 30)],
        [("j3", 31), ("j4", 31)],
        [("j5", 45)],
    ]
    lone = ExecutionMessage.scheduled(jobs[5].key, T0 + timedelta(seconds=45), 1)
    assert lone.to_json() in queue.bodies  # byte-identical to a message sent alone
    assert (report.messages_sent, report.queue_sends) == (6, 3)


def test_more_than_a_batch_holds_is_split_evenly(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    jobs = make_jobs(store, BATCH_LIMIT + 6, T0)

    report = run_tick(store, queue, settings, now=T0 + timedelta(seconds=1))

    batches = _received(queue)
    assert sorted(len(b) for b in batches) == [35, 35]
    assert {m.job_key for b in batches for m in b} == {j.key for j in jobs}
    assert (report.messages_sent, report.queue_sends) == (BATCH_LIMIT + 6, 2)


def test_a_lone_job_is_a_lone_message(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    job = make_job(store, "j", definition(T0))

    report = run_tick(store, queue, settings, now=T0 + timedelta(seconds=1))

    [received] = queue.receive(max_messages=5, visibility_timeout=30)
    assert received.body == ExecutionMessage.scheduled(job.key, T0, 1).to_json()
    assert (report.messages_sent, report.queue_sends) == (1, 1)


def test_a_batch_whose_send_fails_is_sent_one_by_one(
    store: TableStore, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    jobs = make_jobs(store, 3, T0)
    queue = RecordingQueue(settings, fail_batches=1).ready()

    with caplog.at_level(logging.WARNING):
        report = run_tick(store, queue, settings, now=T0 + timedelta(seconds=1))

    assert "batch send failed" in caplog.text
    received = _received(queue)
    assert sorted(m.job_key for [m] in received) == [j.key for j in jobs]  # three lone ones
    assert (report.messages_sent, report.queue_sends, report.failed) == (3, 3, 0)
    nxt = T0 + timedelta(hours=1)
    assert [reload(store, j).next_execution_time for j in jobs] == [nxt] * 3


def test_a_job_deleted_and_created_again_after_its_batch_gets_its_own_message(
    store: TableStore, settings: Settings
) -> None:
    """Between the batch send and the job's task, the API deletes the job and creates it
    again (a new incarnation): the batch carried the old one's message, which the executor
    drops; the task loses its ETag race, re-reads, and sends the new job's own message
    (not skipped as "sent in a batch": it is another message) before advancing it once."""
    old, other = make_jobs(store, 2, LATER)
    old = set_job(store, old, incarnation="first")

    queue = RecordingQueue(settings, on_send=recreated_on_send(store, old, LATER)).ready()
    report = run_tick(store, queue, settings, now=T0)

    [batch, lone] = [parse_body(body) for body in queue.bodies]
    assert {(m.job_key, m.incarnation) for m in batch} == {(old.key, "first"), (other.key, "")}
    assert [(m.job_key, m.incarnation) for m in lone] == [(old.key, "second")]
    assert (report.messages_sent, report.queue_sends) == (3, 2)
    nxt = LATER + timedelta(hours=1)
    stored = reload(store, old)
    assert (stored.incarnation, stored.next_execution_time, stored.bookkeeping.occurrences) == (
        "second",
        nxt,
        1,
    )
    assert reload(store, other).next_execution_time == nxt


def test_a_job_rescheduled_after_its_batch_keeps_the_new_schedule(
    store: TableStore, settings: Settings
) -> None:
    """The API moves a job right after its batch went out: its task loses the ETag race and
    leaves the new schedule alone (the occurrence sent is the executor's to drop)."""
    moved, other = make_jobs(store, 2, LATER)
    tomorrow = T0 + timedelta(days=1)

    def api_reschedules(message: ExecutionMessage) -> None:
        if message.job_key == moved.key:
            set_job(store, moved, definition=definition(tomorrow), next_execution_time=tomorrow)

    run_tick(store, RecordingQueue(settings, on_send=api_reschedules).ready(), settings, now=T0)

    stored = reload(store, moved)
    assert (stored.next_execution_time, stored.bookkeeping.occurrences) == (tomorrow, 0)
    assert reload(store, other).next_execution_time == LATER + timedelta(hours=1)


@pytest.mark.parametrize(
    ("window", "together"),
    [(60, [[10, 25, 50]]), (30, [[10, 25], [50]])],
)
def test_occurrences_of_one_coalescing_window_are_one_queue_message(
    store: TableStore, settings: Settings, window: int, together: list[list[int]]
) -> None:
    """`SCHEDULER_PRECISION=minute` with `SCHEDULER_COALESCE_SECONDS`: occurrences at :10, :25
    and :50 go out together when one window holds them (a minute), as two messages when two
    do (half minutes: the lone one as it is sent alone), each visible at its window's end,
    never before its own second."""
    coalescing = replace(settings, precision=Precision.MINUTE, coalesce_seconds=window)
    seconds = [10, 25, 50]
    jobs = [make_job(store, f"j{s}", definition(T0 + timedelta(seconds=s))) for s in seconds]
    queue = RecordingQueue(coalescing).ready()

    report = run_tick(store, queue, coalescing, now=T0)

    assert report.messages_sent == 3
    assert sorted(sorted(m.occurrence.second for m in parse_body(b)) for b in queue.bodies) == (
        together
    )
    for job, second in zip(jobs, seconds, strict=True):
        due = T0 + timedelta(seconds=second)
        message = ExecutionMessage.scheduled(job.key, due, 1)
        delay = queue.delay_seconds(message, visible_at=due, now=T0)
        assert delay == -(-second // window) * window >= second  # its window's end
