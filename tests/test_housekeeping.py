"""Daily housekeeping against real Azurite tables: history retention (60 days, newest 1000)
and the deletion of jobs that ended Completed or Faulted more than 60 days ago."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

import pytest

from scheduler_lib.domain import ExecutorState
from scheduler_lib.housekeeping import HousekeepingReport, run_housekeeping
from scheduler_lib.store.history import HistoryEntry, add_history, list_history
from scheduler_lib.store.jobs import find_job, put_job
from scheduler_lib.store.tables import TableStore
from tests.execution.harness import T0, http_action, make_job

NOW = T0 + timedelta(days=100)


def _history(store: TableStore, key: str, *starts: datetime) -> None:
    for start in starts:
        add_history(
            store,
            HistoryEntry(key, start, start + timedelta(seconds=1), start, "MainAction",
                         "Completed", "ok"),
        )  # fmt: skip


def _count(store: TableStore, key: str) -> int:
    entries, _ = list_history(store, key, page_size=1000)
    return len(entries)


def test_history_older_than_60_days_is_pruned(store: TableStore) -> None:
    job = make_job(store, http_action("http://127.0.0.1:9/"))
    _history(store, job.key, NOW - timedelta(days=61), NOW - timedelta(days=59), NOW)

    report = run_housekeeping(store, now=NOW)

    assert report == HousekeepingReport(jobs_scanned=1, history_pruned=1)
    entries, _ = list_history(store, job.key)
    assert [e.start_time for e in entries] == [NOW, NOW - timedelta(days=59)]
    assert run_housekeeping(store, now=NOW).history_pruned == 0  # idempotent


def test_history_keeps_the_newest_entries_per_job(store: TableStore) -> None:
    job = make_job(store, http_action("http://127.0.0.1:9/"))
    _history(store, job.key, *(NOW - timedelta(minutes=m) for m in range(7)))

    report = run_housekeeping(store, now=NOW, history_keep=5)  # 1000 in production

    assert report.history_pruned == 2
    entries, _ = list_history(store, job.key)
    assert entries[-1].start_time == NOW - timedelta(minutes=4)


@pytest.mark.parametrize(
    ("state", "ended_days_ago", "deleted"),
    [
        pytest.param("Completed", 61, True, id="completed-61-days-ago-deleted"),
        pytest.param("Faulted", 61, True, id="faulted-61-days-ago-deleted"),
        pytest.param("Completed", 59, False, id="completed-59-days-ago-kept"),
        pytest.param("Enabled", 400, False, id="enabled-never-deleted"),
        pytest.param("Disabled", 400, False, id="disabled-never-deleted"),
    ],
)
def test_finished_jobs_are_deleted_60_days_after_they_end(
    store: TableStore, state: str, ended_days_ago: int, deleted: bool
) -> None:
    job = make_job(store, http_action("http://127.0.0.1:9/"), state=state)
    ended = NOW - timedelta(days=ended_days_ago)
    executor = ExecutorState(ended_at=ended)
    job = put_job(store, replace(job, bookkeeping=replace(job.bookkeeping, executor=executor)))
    _history(store, job.key, ended - timedelta(minutes=1), ended)
    other = make_job(store, http_action("http://127.0.0.1:9/"), name="Other-Job")
    _history(store, other.key, NOW)

    report = run_housekeeping(store, now=NOW)

    assert (find_job(store, job.key) is None) is deleted
    assert report.jobs_deleted == (1 if deleted else 0)
    assert report.jobs_scanned == 2
    assert _count(store, job.key) == (0 if deleted else 2 if ended_days_ago < 60 else 0)
    assert _count(store, other.key) == 1


def test_a_job_finished_by_the_dispatcher_uses_its_last_execution(store: TableStore) -> None:
    job = make_job(store, http_action("http://127.0.0.1:9/"), state="Completed")
    put_job(store, replace(job, last_execution_time=NOW - timedelta(days=70)))

    assert run_housekeeping(store, now=NOW).jobs_deleted == 1
    assert find_job(store, job.key) is None
