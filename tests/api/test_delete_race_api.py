"""DELETE racing a PUT of the same job name, interleaved step by step (not by luck), and the
consistency check that repairs a job whose due-index row was lost anyway. Real HTTP against
the API, real Azurite tables and queue, the test's clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx

from scheduler_lib.config import Settings
from scheduler_lib.dispatch.tick import run_tick
from scheduler_lib.domain.jobs import JobRecord
from scheduler_lib.health import check_health
from scheduler_lib.housekeeping import run_housekeeping
from scheduler_lib.runtime import Runtime
from scheduler_lib.service.context import ApiContext
from scheduler_lib.service.jobs import purge
from scheduler_lib.store.due_index import due_rows, remove_due
from scheduler_lib.store.execution_queue import ExecutionQueue
from scheduler_lib.store.history import list_history
from scheduler_lib.store.jobs import delete_job, get_job
from scheduler_lib.store.tables import TableStore
from tests.api.conftest import RG, SUB, job_body, job_path, make_collection
from tests.support.api_server import ManualClock

START = "2026-03-04T09:30:00Z"
EVERY_MINUTE = {"frequency": "Minute", "interval": 1}


def _rows(store: TableStore, hours: int = 2) -> list[tuple[str, datetime]]:
    now = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
    return [
        (r.job_key, r.due) for r in due_rows(store, start=now, through=now + timedelta(hours=hours))
    ]


def test_a_delete_finishing_after_a_new_put_leaves_the_new_jobs_due_row(
    client: httpx.Client, store: TableStore, settings: Settings, clock: ManualClock
) -> None:
    make_collection(client)
    body = job_body(startTime=START, recurrence=EVERY_MINUTE)
    assert client.put(job_path(), json=body).status_code == 201
    old = get_job(store, SUB, RG, "coll", "job1")

    # DELETE, step 1: the job entity is deleted ...
    delete_job(store, old, etag=old.etag)
    # ... a PUT of the same name creates the job again, with the same first occurrence ...
    assert client.put(job_path(), json=body).status_code == 201
    new = get_job(store, SUB, RG, "coll", "job1")
    assert new.incarnation != old.incarnation
    assert _rows(store) == [(new.key, new.next_execution_time)]
    # ... and only then does the DELETE clean up after the old job.
    purge(ApiContext(settings, clock, store, ExecutionQueue(settings)), old)

    assert _rows(store) == [(new.key, new.next_execution_time)]
    queue = ExecutionQueue(settings)
    queue.ensure()
    tick = run_tick(store, queue, settings, now=new.next_execution_time - timedelta(seconds=30))
    assert tick.messages_sent == 1


def test_the_deleted_jobs_own_row_is_removed(client: httpx.Client, store: TableStore) -> None:
    make_collection(client)
    assert client.put(job_path(), json=job_body(startTime=START)).status_code == 201
    assert client.delete(job_path()).status_code == 200
    assert _rows(store) == []


def _job_without_its_row(client: httpx.Client, store: TableStore, **properties) -> JobRecord:
    """A job created through the API whose due-index row was then lost."""
    make_collection(client)
    assert client.put(job_path(), json=job_body(startTime=START, **properties)).status_code == 201
    job = get_job(store, SUB, RG, "coll", "job1")
    remove_due(store, job.key, job.next_execution_time)
    return job


def test_an_overdue_job_without_a_row_is_found_repaired_postponed_and_reported(
    client: httpx.Client, store: TableStore, settings: Settings
) -> None:
    job = _job_without_its_row(client, store, recurrence=EVERY_MINUTE)
    later = datetime(2026, 3, 4, 10, 0, 10, tzinfo=UTC)  # 30 min after its next execution
    runtime = Runtime(settings, clock=lambda: later)
    queue = runtime.queue
    queue.ensure()
    # Ticks alone never find it again: nothing indexes it.
    assert run_tick(store, queue, settings, now=later).rows_read == 0

    runtime.upkeep(later)  # minute 0: the tick's periodic check runs

    _, body = check_health(store, now=later)
    assert body["jobs"]["overdue"] == 1 and body["status"] == "Degraded"
    tick = run_tick(store, queue, settings, now=later + timedelta(seconds=50))
    assert tick.postponed == 1
    [entry], _ = list_history(store, job.history_key)
    assert entry.status == "Postponed" and entry.expected_execution_time == job.next_execution_time
    after = get_job(store, SUB, RG, "coll", "job1")
    assert after.state == "Enabled" and after.next_execution_time > later
    # The next check finds nothing wrong: healthy again.
    runtime.upkeep(later + timedelta(minutes=5))
    assert check_health(store, now=later + timedelta(minutes=5))[1]["jobs"]["overdue"] == 0


def test_the_periodic_check_runs_every_fifth_minute_only(
    client: httpx.Client, store: TableStore, settings: Settings
) -> None:
    job = _job_without_its_row(client, store)
    runtime = Runtime(settings)
    off_minute = datetime(2026, 3, 4, 10, 1, tzinfo=UTC)

    runtime.upkeep(off_minute)
    assert _rows(store, hours=3) == []
    runtime.upkeep(off_minute + timedelta(minutes=4))
    assert _rows(store, hours=3) == [(job.key, job.next_execution_time)]


def test_housekeeping_re_indexes_a_future_job_without_a_row(
    client: httpx.Client, store: TableStore, settings: Settings
) -> None:
    job = _job_without_its_row(client, store)
    now = datetime(2026, 3, 4, 9, 5, tzinfo=UTC)

    report = run_housekeeping(store, now=now, grace_period=settings.grace_period)

    assert report.repair is not None and report.repair.unindexed == 1
    assert _rows(store) == [(job.key, job.next_execution_time)]


def test_jobs_of_a_disabled_collection_are_not_overdue(
    client: httpx.Client, store: TableStore, settings: Settings
) -> None:
    make_collection(client)
    assert client.put(job_path(), json=job_body(startTime=START)).status_code == 201
    assert client.post(job_path().rsplit("/jobs/", 1)[0] + "/disable").status_code == 200
    later = datetime(2026, 3, 4, 11, 0, tzinfo=UTC)

    report = run_housekeeping(store, now=later, grace_period=settings.grace_period)

    assert report.repair is not None and report.repair.overdue == 0
