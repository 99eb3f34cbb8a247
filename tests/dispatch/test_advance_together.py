"""Jobs whose occurrences a chunk sent in a batch are advanced together (`chunk.py`
`_advance_together`, `store.replace_jobs`): a collection's jobs in one transaction, where
each job's task wrote its own (grouped only with the few writes that overlapped it). A job
changed after the chunk read it fails alone, and its task advances it as before: read again,
the advance applied again, the other writer's change kept.

Real Azurite tables and queue; the requests are counted by the cost benchmark's hook
(`storage_calls`) on a store made after it is set. One shard (`shards(1)`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import timedelta

import pytest

from scheduler_lib import storage_calls
from scheduler_lib.config import Settings
from scheduler_lib.dispatch.tick import run_tick
from scheduler_lib.domain import Bookkeeping
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.store.tables import TableStore
from tests.dispatch.support import T0, RecordingQueue, all_rows, make_jobs, reload, set_job

pytestmark = pytest.mark.shards(1)

DUE = T0 + timedelta(seconds=30)
NEXT = DUE + timedelta(hours=1)


def _job_writes(before: Counter[str]) -> Counter[str]:
    """Requests to the jobs table since `before`, by method (`batch POST`: a transaction)."""
    made = Counter(storage_calls.snapshot()) - before
    methods: Counter[str] = Counter()
    for stage, number in made.items():
        if "store.jobs [table " in stage:
            methods[stage.rsplit("[table ", 1)[1].rstrip("]")] += number
    return methods


def test_a_collection_s_jobs_sent_in_one_batch_are_advanced_in_one_transaction(
    store: TableStore, counted_store: TableStore, settings: Settings
) -> None:
    jobs = make_jobs(store, 20, DUE)
    queue = RecordingQueue(settings).ready()
    before = Counter(storage_calls.snapshot())

    report = run_tick(counted_store, queue, settings, now=T0)

    assert (report.messages_sent, report.queue_sends) == (20, 1)
    # One transaction of their advances, where each task's own write made 3-20 requests
    # (as many rounds as its threads' writes overlapped).
    assert _job_writes(before) == {"batch POST": 1}
    for job in jobs:
        stored = reload(store, job)
        assert (stored.next_execution_time, stored.bookkeeping.occurrences) == (NEXT, 1)
    assert all_rows(store) == sorted((j.key, NEXT) for j in jobs)


def test_a_job_changed_after_the_chunk_read_it_is_advanced_by_its_task(
    store: TableStore, counted_store: TableStore, settings: Settings
) -> None:
    """The executor claims one of the occurrences as soon as its batch is sent, before the
    chunk advances the jobs: that job's write fails (its ETag changed), the others are
    written all the same, and its task reads it again and applies the advance to it, the
    executor's claim kept."""
    jobs = make_jobs(store, 5, DUE)
    claimed = jobs[2]

    def executor_claims(message: ExecutionMessage) -> None:
        if message.job_key == claimed.key:
            current = reload(store, claimed)
            claim = replace(current.bookkeeping, other={"claim": message.execution_tag})
            set_job(store, claimed, bookkeeping=claim)

    queue = RecordingQueue(settings, on_send=executor_claims).ready()
    before = Counter(storage_calls.snapshot())

    report = run_tick(counted_store, queue, settings, now=T0)

    assert (report.messages_sent, report.queue_sends) == (5, 1)
    assert report.job_entities_read == 6  # the five, and the claimed one again
    # The transaction that failed at the claimed job and the one of the four others; then
    # the claimed job's task: its write on the ETag it read (failed), its read, its write.
    assert _job_writes(before) == {"batch POST": 2, "PUT": 2, "GET": 1}
    stored = reload(store, claimed)
    tag = next(s.message.execution_tag for s in queue.sent if s.message.job_key == claimed.key)
    assert stored.bookkeeping == Bookkeeping(occurrences=1, sent=(DUE,), other={"claim": tag})
    assert stored.next_execution_time == NEXT
    for job in jobs:
        assert reload(store, job).next_execution_time == NEXT
    assert all_rows(store) == sorted((j.key, NEXT) for j in jobs)
    assert len({s.message.execution_tag for s in queue.sent}) == 5  # each sent once
