"""The dispatcher tick against real Azurite tables and a real Azurite queue.

Time is driven by passing `now`; nothing sleeps. Messages are checked through
`RecordingQueue` (a real ExecutionQueue subclass: every message is really sent) and, where
the occurrence is already due, by receiving them from the queue itself.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest

from scheduler_lib.config import Settings
from scheduler_lib.dispatch.tick import run_tick
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.store.dispatcher_state import get_dispatcher_state
from scheduler_lib.store.due_index import TABLE as DUE_TABLE
from scheduler_lib.store.due_index import add_due, minute_key
from scheduler_lib.store.tables import TableStore
from tests.dispatch.support import (
    T0,
    RecordingQueue,
    all_rows,
    definition,
    make_collection,
    make_job,
    reload,
)


@pytest.mark.slow
def test_fan_out_of_1000_jobs_reads_only_what_is_due(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    """1000 hourly jobs due in the same minute, 200 more due an hour later, in 4 collections:
    one tick sends 1000 messages and reads 1000 rows, 1000 jobs and 4 collections (once per
    tick and worker: here one worker handles every shard)."""
    for name in ("c2", "c3", "c4"):
        make_collection(store, name)
    due = T0 + timedelta(seconds=30)
    with ThreadPoolExecutor(4) as pool:  # only to keep the setup's 2400 writes quick
        jobs = list(
            pool.map(
                lambda i: make_job(
                    store, f"job{i:04d}", definition(due), collection=f"c{i % 4 + 1}"
                ),
                range(1000),
            )
        )
        later = list(
            pool.map(
                lambda i: make_job(store, f"late{i}", definition(due + timedelta(hours=1))),
                range(200),
            )
        )

    report = run_tick(store, queue, settings, now=T0)

    assert (report.rows_read, report.job_entities_read, report.collection_entities_read) == (
        1000,
        1000,
        4,
    )
    assert report.entities_read == 2004
    assert (report.messages_sent, report.stale_dropped, report.failed) == (1000, 0, 0)
    assert {s.message.job_key for s in queue.sent} == {j.key for j in jobs}
    assert {(s.visible_at, s.message.occurrence_number) for s in queue.sent} == {(due, 1)}
    assert len(queue.tags()) == 1000
    next_hour = due + timedelta(hours=1)
    assert all_rows(store) == sorted((j.key, next_hour) for j in jobs + later)
    for job in jobs[::97]:
        stored = reload(store, job)
        assert (stored.next_execution_time, stored.bookkeeping.occurrences) == (next_hour, 1)


def test_cost_follows_what_is_due_not_what_exists(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    """Jobs due later are never read: the tick reads the due minutes only."""
    make_job(store, "now", definition(T0 + timedelta(seconds=10)))
    for i in range(30):
        make_job(store, f"later{i}", definition(T0 + timedelta(minutes=10 + i)))

    report = run_tick(store, queue, settings, now=T0)

    assert (report.rows_read, report.job_entities_read, report.messages_sent) == (1, 1, 1)
    # grace (5 minutes) before now through the look-ahead minute
    assert (report.first_minute, report.through_minute) == ("202603040855", "202603040901")
    assert report.minutes_read == 7


def test_message_becomes_visible_at_its_second(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    job = make_job(store, "j", definition(T0 + timedelta(seconds=75)))

    run_tick(store, queue, settings, now=T0)

    [sent] = queue.sent
    assert sent.message == ExecutionMessage.scheduled(job.key, T0 + timedelta(seconds=75), 1)
    assert sent.visible_at == T0 + timedelta(seconds=75)
    assert T0 <= sent.now < T0 + timedelta(seconds=5)  # measured when sent, not at tick start


def test_due_occurrence_is_really_on_the_queue(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    job = make_job(store, "j", definition(T0))

    run_tick(store, queue, settings, now=T0 + timedelta(seconds=1))

    [received] = queue.receive(max_messages=5, visibility_timeout=30)
    assert ExecutionMessage.from_json(received.body) == ExecutionMessage.scheduled(job.key, T0, 1)


def test_a_tick_run_twice_sends_nothing_more(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    for i in range(5):
        make_job(store, f"j{i}", definition(T0 + timedelta(seconds=i)))

    first = run_tick(store, queue, settings, now=T0)
    second = run_tick(store, queue, settings, now=T0)

    assert (first.messages_sent, second.messages_sent) == (5, 0)
    assert (second.rows_read, second.job_entities_read) == (0, 0)
    assert len(queue.sent) == len(queue.tags()) == 5


def test_next_occurrence_inside_the_look_ahead_is_sent_in_the_same_tick(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    """An every-minute job: the tick at 09:00:00 covers 09:00 and the look-ahead minute."""
    job = make_job(store, "j", definition(T0 + timedelta(seconds=20), "Minute"))

    run_tick(store, queue, settings, now=T0)

    assert [(s.message.occurrence, s.message.occurrence_number) for s in queue.sent] == [
        (T0 + timedelta(seconds=20), 1),
        (T0 + timedelta(seconds=80), 2),
    ]
    assert reload(store, job).next_execution_time == T0 + timedelta(seconds=140)
    assert all_rows(store) == [(job.key, T0 + timedelta(seconds=140))]


@pytest.mark.parametrize(
    ("count", "end_after", "expected_sent"),
    [
        pytest.param(3, None, 3, id="count-3"),
        pytest.param(None, timedelta(minutes=2, seconds=30), 3, id="endTime-after-third"),
        pytest.param(2, timedelta(minutes=10), 2, id="count-before-endTime"),
        pytest.param(None, timedelta(minutes=2), 3, id="endTime-exactly-on-third-runs"),
    ],
)
def test_count_and_end_time_end_the_schedule(
    store: TableStore,
    queue: RecordingQueue,
    settings: Settings,
    count: int | None,
    end_after: timedelta | None,
    expected_sent: int,
) -> None:
    """Minute ticks over an every-minute job; the last dispatched occurrence leaves
    nextExecutionTime empty and no row; the state stays for the executor to complete."""
    end = T0 + end_after if end_after is not None else None
    job = make_job(store, "j", definition(T0, "Minute", count=count, end_time=end))

    for minute in range(0, 12, 2):
        run_tick(store, queue, settings, now=T0 + timedelta(minutes=minute))

    assert [s.message.occurrence_number for s in queue.sent] == list(range(1, expected_sent + 1))
    stored = reload(store, job)
    assert stored.next_execution_time is None
    assert stored.bookkeeping.occurrences == expected_sent
    assert stored.state == "Enabled"
    assert all_rows(store) == []


def test_tick_saves_cursor_and_summary_for_the_health_endpoint(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    make_job(store, "j", definition(T0))

    report = run_tick(store, queue, settings, now=T0)

    state = get_dispatcher_state(store)
    assert state.cursor == T0 + timedelta(minutes=1)
    assert minute_key(state.cursor) == report.through_minute
    assert state.last_tick_at == T0
    counts = state.last_tick.counts
    assert (counts["messages_sent"], counts["queue_sends"]) == (1, 1)
    assert state.last_tick.counts["entities_read"] == report.entities_read == 3
    assert state.last_tick.times["now"] == "2026-03-04T09:00:00Z"


@pytest.mark.shards(1)
def test_soonest_occurrences_are_sent_first(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    """In a long tick, what is due soonest must not wait behind the rest (in one shard;
    shards are handled in parallel)."""
    for name, second in (("a", 50), ("b", 10), ("c", 70), ("d", 30)):
        make_job(store, name, definition(T0 + timedelta(seconds=second)))

    run_tick(store, queue, settings, now=T0, workers=1)

    assert [s.message.occurrence.second for s in queue.sent] == [10, 30, 50, 10]
    assert [s.message.job_key[-1] for s in queue.sent] == ["b", "d", "a", "c"]


@pytest.mark.shards(1)
def test_due_index_rows_are_written_and_removed_in_transactions(
    store: TableStore, queue: RecordingQueue, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """250 hourly jobs due in one minute: their next rows share a minute, so each chunk of
    100 jobs writes them in one transaction and removes the handled rows in another, instead
    of two round trips per job. (The Azurite table client is counted, not replaced.)"""
    due = T0 + timedelta(seconds=30)
    jobs = [make_job(store, f"j{i:03d}", definition(due)) for i in range(250)]
    table, calls = store.table(DUE_TABLE), Counter[str]()
    for name in ("submit_transaction", "upsert_entity", "delete_entity"):
        monkeypatch.setattr(table, name, _counting(getattr(table, name), name, calls))

    report = run_tick(store, queue, settings, now=T0)

    assert report.messages_sent == 250
    assert calls == {"submit_transaction": 6}  # chunks of 100, 100 and 50
    assert all_rows(store) == sorted((j.key, due + timedelta(hours=1)) for j in jobs)


def test_a_row_the_api_writes_again_meanwhile_is_not_removed(
    store: TableStore, settings: Settings
) -> None:
    """The API reschedules the job into the very minute of the row the tick is handling
    (after the tick read it, before it removed it): that new row must survive the tick."""
    due = T0 + timedelta(seconds=30)
    job = make_job(store, "j", definition(due))
    moved = T0 + timedelta(seconds=50)

    def api_reschedules(message: ExecutionMessage) -> None:
        add_due(store, job.key, moved)

    queue = RecordingQueue(settings, on_send=api_reschedules).ready()
    run_tick(store, queue, settings, now=T0)

    assert (job.key, moved) in all_rows(store)


def _counting(call: Callable[..., Any], name: str, calls: Counter[str]) -> Callable[..., Any]:
    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[name] += 1
        return call(*args, **kwargs)

    return counted
