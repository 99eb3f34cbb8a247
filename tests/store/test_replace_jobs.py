"""Jobs replaced together (`store.replace_jobs`, `grouped_writes.write_together`): those of
one collection in as few entity-group transactions as they fit (100 operations each), each
conditional on its ETag, each job's outcome its own: written with its new ETag, or None when
its write failed (changed or deleted meanwhile), the others written all the same.

Real Azurite; the requests are counted by the cost benchmark's hook (`storage_calls`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime

from scheduler_lib import storage_calls
from scheduler_lib.domain import JobDefinition, JobRecord
from scheduler_lib.store import replace_jobs
from scheduler_lib.store.jobs import delete_job, find_job, put_job
from scheduler_lib.store.tables import TableStore

CREATED = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
LATER = datetime(2026, 3, 4, 10, 0, tzinfo=UTC)


def _job(name: str, collection: str) -> JobRecord:
    definition = {"action": {"type": "Http", "request": {"uri": "http://x", "method": "GET"}}}
    return JobRecord("Sub", "RG", collection, name, JobDefinition(definition), CREATED)


def _stored(store: TableStore, count: int, collection: str) -> list[JobRecord]:
    return [put_job(store, _job(f"job{i:03d}", collection)) for i in range(count)]


def _table_requests(before: Counter[str]) -> Counter[str]:
    """Table requests since `before`, by kind: `batch` (a transaction) or `single`."""
    made = Counter(storage_calls.snapshot()) - before
    kinds: Counter[str] = Counter()
    for stage, number in made.items():
        if "[table " in stage:
            kinds["batch" if "[table batch" in stage else "single"] += number
    return kinds


def _moved(jobs: list[JobRecord]) -> list[tuple[JobRecord, str]]:
    """Each job advanced (its next execution time set), conditional on its ETag as read."""
    return [(replace(job, next_execution_time=LATER), job.etag or "") for job in jobs]


def test_each_collection_s_jobs_are_one_transaction(counted_store: TableStore) -> None:
    jobs = _stored(counted_store, 12, "Coll") + _stored(counted_store, 3, "Other")
    before = Counter(storage_calls.snapshot())

    written = replace_jobs(counted_store, _moved(jobs))

    assert _table_requests(before) == {"batch": 2}
    for job, saved in zip(jobs, written, strict=True):
        stored = find_job(counted_store, job.key)
        assert saved is not None and stored is not None
        assert saved.etag == stored.etag != job.etag
        assert stored.next_execution_time == LATER


def test_a_collection_of_more_than_a_transaction_holds_takes_two(counted_store: TableStore) -> None:
    jobs = _stored(counted_store, 130, "Coll")
    before = Counter(storage_calls.snapshot())

    written = replace_jobs(counted_store, _moved(jobs))

    assert _table_requests(before) == {"batch": 2}  # 100, then 30
    assert all(saved is not None for saved in written)


def test_a_job_changed_or_deleted_meanwhile_fails_alone(counted_store: TableStore) -> None:
    jobs = _stored(counted_store, 6, "Coll")
    other_writer = replace(jobs[2], next_execution_time=CREATED)
    changed = put_job(counted_store, other_writer)
    delete_job(counted_store, jobs[4])
    before = Counter(storage_calls.snapshot())

    written = replace_jobs(counted_store, _moved(jobs))

    # Each failing write fails one round; the others go again, and are written once.
    assert _table_requests(before) == {"batch": 3}
    assert [saved is None for saved in written] == [False, False, True, False, True, False]
    kept = find_job(counted_store, jobs[2].key)
    assert kept is not None and kept.etag == changed.etag  # the other writer's change stays
    assert kept.next_execution_time == CREATED
    assert find_job(counted_store, jobs[4].key) is None  # not written again
    for index in (0, 1, 3, 5):
        stored = find_job(counted_store, jobs[index].key)
        assert stored is not None and stored.next_execution_time == LATER
