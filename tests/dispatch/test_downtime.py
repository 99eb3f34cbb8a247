"""Catching up after downtime: within the grace period occurrences run late; beyond it each
job records one `Postponed` history entry and continues at its next future occurrence.
Real Azurite tables and queue; time is passed as `now`."""

from __future__ import annotations

from datetime import timedelta

from scheduler_lib.config import Settings
from scheduler_lib.dispatch.tick import run_tick
from scheduler_lib.store.history import list_history
from scheduler_lib.store.tables import TableStore
from tests.dispatch.support import (
    T0,
    RecordingQueue,
    all_rows,
    definition,
    make_job,
    reload,
)

CREATED = T0 - timedelta(minutes=10)
DUE = T0 + timedelta(seconds=30)


def _last_tick_before_downtime(store: TableStore, settings: Settings) -> None:
    """A tick at 08:58 (nothing due yet) leaves the cursor at 08:59."""
    run_tick(store, RecordingQueue(settings), settings, now=T0 - timedelta(minutes=2))


def test_within_grace_an_occurrence_runs_late(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    job = make_job(store, "j", definition(DUE), created=CREATED)

    report = run_tick(store, queue, settings, now=DUE + timedelta(minutes=4))

    [sent] = queue.sent
    assert (sent.message.occurrence, sent.visible_at, report.postponed) == (DUE, DUE, 0)
    [received] = queue.receive(max_messages=5, visibility_timeout=30)  # visible at once
    assert received.body == sent.body
    assert reload(store, job).next_execution_time == DUE + timedelta(hours=1)


def test_within_grace_an_every_minute_job_catches_up_in_one_tick(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    job = make_job(store, "j", definition(T0, "Minute"), created=CREATED)

    run_tick(store, queue, settings, now=T0 + timedelta(minutes=3))

    # 09:00..09:03 late, 09:04 (the look-ahead minute) on time; continues at 09:05
    assert [s.message.occurrence_number for s in queue.sent] == [1, 2, 3, 4, 5]
    assert [s.message.occurrence for s in queue.sent] == [
        T0 + timedelta(minutes=m) for m in range(5)
    ]
    assert reload(store, job).next_execution_time == T0 + timedelta(minutes=5)


def test_beyond_grace_one_postponed_entry_and_continue_at_the_next_occurrence(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    _last_tick_before_downtime(store, settings)
    job = make_job(store, "j", definition(DUE), created=CREATED)
    now = T0 + timedelta(hours=3, minutes=10)  # 12:10; 12:00:30 is beyond the grace too

    report = run_tick(store, queue, settings, now=now)

    assert queue.sent == []
    assert (report.postponed, report.first_minute, report.through_minute) == (
        1,
        "202603040859",
        "202603041211",
    )
    [entry], _ = list_history(store, job.key)
    assert (entry.status, entry.action_name, entry.expected_execution_time) == (
        "Postponed",
        "MainAction",
        DUE,
    )
    assert entry.message == (
        "Postponed: 4 occurrences missed, due from 2026-03-04T09:00:30Z to 2026-03-04T12:00:30Z, "
        "by more than the grace period (PT5M) while the scheduler was not running. "
        "It continues at 2026-03-04T13:00:30Z."
    )
    stored = reload(store, job)
    assert (stored.next_execution_time, stored.bookkeeping.occurrences, stored.state) == (
        DUE + timedelta(hours=4),
        0,  # skipped occurrences are not executions
        "Enabled",
    )
    assert all_rows(store) == [(job.key, DUE + timedelta(hours=4))]


def test_one_postponed_occurrence_is_worded_in_the_singular(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    _last_tick_before_downtime(store, settings)
    job = make_job(store, "j", definition(DUE), created=CREATED)

    run_tick(store, queue, settings, now=DUE + timedelta(minutes=10))  # beyond PT5M's grace

    [entry], _ = list_history(store, job.key)
    assert entry.status == "Postponed"
    assert entry.message == (
        "Postponed: 1 occurrence missed, due at 2026-03-04T09:00:30Z, by more than the grace "
        "period (PT5M) while the scheduler was not running. It continues at 2026-03-04T10:00:30Z."
    )


def test_without_a_cursor_rows_before_the_grace_window_are_not_read(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    """The cursor is what lets a tick after downtime find what was missed."""
    make_job(store, "j", definition(DUE), created=CREATED)

    report = run_tick(store, queue, settings, now=T0 + timedelta(hours=3))

    assert (report.rows_read, report.postponed, report.minutes_read) == (0, 0, 7)


def test_beyond_grace_an_every_minute_job_continues_in_the_same_tick(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    _last_tick_before_downtime(store, settings)
    job = make_job(store, "j", definition(T0, "Minute"), created=CREATED)

    run_tick(store, queue, settings, now=T0 + timedelta(hours=2))

    [entry], _ = list_history(store, job.key)
    assert entry.message.startswith(
        "Postponed: 121 occurrences missed, due from 2026-03-04T09:00:00Z to 2026-03-04T11:00:00Z,"
    )
    assert [(s.message.occurrence, s.message.occurrence_number) for s in queue.sent] == [
        (T0 + timedelta(hours=2, minutes=1), 1)
    ]


def test_end_time_passed_during_downtime_completes_the_job(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    _last_tick_before_downtime(store, settings)
    job = make_job(store, "j", definition(DUE, end_time=T0 + timedelta(hours=2)), created=CREATED)

    report = run_tick(store, queue, settings, now=T0 + timedelta(hours=3))

    [entry], _ = list_history(store, job.key)
    assert entry.message.endswith("The job has no later occurrence and is Completed.")
    stored = reload(store, job)
    assert (stored.state, stored.next_execution_time) == ("Completed", None)
    assert (report.completed, queue.sent, all_rows(store)) == (1, [], [])


def test_skipped_occurrences_do_not_use_up_count(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    _last_tick_before_downtime(store, settings)
    job = make_job(store, "j", definition(DUE, count=2), created=CREATED)

    for hours in (3, 4, 5, 6):
        run_tick(store, queue, settings, now=T0 + timedelta(hours=hours))

    assert [(s.message.occurrence, s.message.occurrence_number) for s in queue.sent] == [
        (DUE + timedelta(hours=3), 1),
        (DUE + timedelta(hours=4), 2),
    ]
    assert reload(store, job).next_execution_time is None


def test_postponement_interrupted_before_its_history_entry_is_finished_once(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    """The history table is unavailable when the tick writes the entry (the job is already
    advanced): the next ticks write the entry exactly once."""
    _last_tick_before_downtime(store, settings)
    job = make_job(store, "j", definition(DUE), created=CREATED)
    history_table = settings.table_name("JobHistory")
    store.service.delete_table(history_table)
    now = T0 + timedelta(hours=3, minutes=10)

    broken = run_tick(store, queue, settings, now=now)
    store.ensure_tables()
    mended = run_tick(store, queue, settings, now=now + timedelta(minutes=1))
    again = run_tick(store, queue, settings, now=now + timedelta(minutes=2))

    assert (broken.failed, broken.postponed) == (1, 0)
    assert (mended.failed, mended.postponed, mended.history_entities_read) == (0, 1, 1)
    assert (again.rows_read, again.postponed) == (0, 0)
    entries, _ = list_history(store, job.key)
    assert [(e.status, e.expected_execution_time) for e in entries] == [("Postponed", DUE)]
    assert all_rows(store) == [(job.key, DUE + timedelta(hours=4))]
    assert queue.sent == []
