"""A tick reads a chunk's jobs 14 of a collection to a query (`store.read_jobs`), where it
read each job by itself: the same dispatch, fewer requests. Azurite's real table client is
counted, not replaced (as test_tick's transaction test counts it)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from azure.core.exceptions import ServiceRequestError

from scheduler_lib.config import Settings
from scheduler_lib.dispatch.tick import run_tick
from scheduler_lib.store.due_index import shard_of
from scheduler_lib.store.job_reads import JOBS_PER_READ
from scheduler_lib.store.jobs import TABLE, delete_job
from scheduler_lib.store.tables import TableStore
from tests.dispatch.support import (
    T0,
    RecordingQueue,
    definition,
    make_collection,
    make_job,
    reload,
)


def _count(
    store: TableStore, monkeypatch: pytest.MonkeyPatch, *, failing_queries: int = 0
) -> Counter[str]:
    """Counts the jobs table's point reads and queries; the first `failing_queries` queries
    fail before anything is sent (as a refused connection fails them)."""
    table, calls = store.table(TABLE), Counter[str]()

    def counted(name: str) -> Callable[..., Any]:
        real = getattr(table, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            if name == "query_entities" and calls[name] <= failing_queries:
                raise ServiceRequestError("connection refused")
            return real(*args, **kwargs)

        return call

    for name in ("get_entity", "query_entities"):
        monkeypatch.setattr(table, name, counted(name))
    return calls


@pytest.mark.parametrize("workers", [1, 4])
def test_jobs_of_a_collection_are_read_fourteen_to_a_request(
    store: TableStore,
    queue: RecordingQueue,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    workers: int,
) -> None:
    """40 jobs of c1 and one of c2 due in one minute, spread over the due index's shards and
    handled by one pair: a query for each 14 jobs of c1 and a point read for the job of c2;
    each job dispatched once and advanced."""
    make_collection(store, "c2")
    due = T0 + timedelta(seconds=30)
    jobs = [make_job(store, f"j{i:02d}", definition(due)) for i in range(40)]
    jobs.append(make_job(store, "alone", definition(due), collection="c2"))
    calls = _count(store, monkeypatch)

    report = run_tick(store, queue, settings, now=T0, workers=workers)

    assert len({shard_of(job.key, settings.dispatch_shards) for job in jobs}) > 1
    queries = -(-40 // JOBS_PER_READ)
    assert calls == {"query_entities": queries, "get_entity": 1}  # where each job was read alone
    assert (report.job_entities_read, report.messages_sent, report.failed) == (41, 41, 0)
    assert sorted(s.message.job_key for s in queue.sent) == sorted(j.key for j in jobs)
    for job in jobs:
        assert reload(store, job).bookkeeping.occurrences == 1


def test_a_job_deleted_since_its_row_is_dropped_and_the_others_go(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    due = T0 + timedelta(seconds=30)
    jobs = [make_job(store, f"j{i}", definition(due)) for i in range(5)]
    delete_job(store, jobs[2])

    report = run_tick(store, queue, settings, now=T0)

    assert (report.stale_dropped, report.messages_sent, report.failed) == (1, 4, 0)
    assert {s.message.job_key for s in queue.sent} == {j.key for j in jobs} - {jobs[2].key}


def test_a_query_that_fails_reads_its_jobs_one_by_one(
    store: TableStore, queue: RecordingQueue, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every query fails (the storage account refuses them): each job is then read by
    itself, and the tick still dispatches all of them."""
    due = T0 + timedelta(seconds=30)
    jobs = [make_job(store, f"j{i:02d}", definition(due)) for i in range(20)]
    calls = _count(store, monkeypatch, failing_queries=1000)

    report = run_tick(store, queue, settings, now=T0)

    assert calls["query_entities"] >= 1  # 20 jobs of one collection: they share one
    assert calls["get_entity"] == 20
    assert (report.messages_sent, report.failed) == (20, 0)
    assert {s.message.job_key for s in queue.sent} == {j.key for j in jobs}
