"""Immediate dispatch of a job whose occurrence the next tick would see too late, against
real storage and a real queue (Azurite)."""

from datetime import timedelta
from typing import Any

import pytest
from azure.data.tables import TableClient

from scheduler_lib.config import Settings
from scheduler_lib.dispatch.now import dispatch_if_due, due_before_next_tick
from scheduler_lib.dispatch.tick import run_tick
from scheduler_lib.domain import CollectionRecord, JobRecord
from scheduler_lib.store.collections import get_collection
from scheduler_lib.store.tables import TableStore
from tests.dispatch.support import (
    RG,
    SUB,
    T0,
    RecordingQueue,
    all_rows,
    definition,
    make_collection,
    make_job,
    reload,
    set_job,
)


def _collection(store: TableStore, job: JobRecord) -> CollectionRecord:
    """The job's collection, as the API request that stored the job has read it."""
    return get_collection(store, SUB, RG, job.collection_name)


@pytest.mark.parametrize(
    ("offset", "expected"),
    [
        (timedelta(0), True),
        (timedelta(seconds=59), True),
        (timedelta(seconds=119), True),  # in the look-ahead minute (09:01)
        (timedelta(minutes=2), False),
    ],
    ids=["due-now", "this-minute", "look-ahead-minute", "after-the-next-tick"],
)
def test_window_is_what_a_tick_at_now_would_read(
    store: TableStore, offset: timedelta, expected: bool
) -> None:
    job = make_job(store, "j", definition(T0 + offset, frequency=None))
    assert due_before_next_tick(job, now=T0) is expected


def test_due_job_is_sent_and_advanced_once(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    job = make_job(store, "j", definition(T0, "Hour", count=3))
    advanced = dispatch_if_due(store, queue, settings, job, _collection(store, job), now=T0)
    assert advanced is not None
    assert advanced.next_execution_time == T0 + timedelta(hours=1)
    assert advanced.bookkeeping.occurrences == 1
    assert [(s.message.occurrence, s.visible_at) for s in queue.sent] == [(T0, T0)]
    assert all_rows(store) == [(job.key, T0 + timedelta(hours=1))]
    # A tick at the same instant (racing, or the next one) finds nothing left to send.
    report = run_tick(store, queue, settings, now=T0)
    assert report.messages_sent == 0 and len(queue.sent) == 1


@pytest.mark.parametrize(
    ("collection_enabled", "job_state", "start"),
    [
        (True, "Enabled", T0 + timedelta(minutes=5)),
        (False, "Enabled", T0),
        (True, "Disabled", T0),
    ],
    ids=["not-due-yet", "collection-disabled", "job-disabled"],
)
def test_nothing_is_sent_when_not_due_or_not_runnable(
    store: TableStore,
    queue: RecordingQueue,
    settings: Settings,
    collection_enabled: bool,
    job_state: str,
    start,
) -> None:
    make_collection(store, enabled=collection_enabled)
    job = make_job(store, "j", definition(start, "Hour"), state=job_state)
    collection = _collection(store, job)
    assert dispatch_if_due(store, queue, settings, job, collection, now=T0) is None
    assert queue.sent == []


def test_it_reads_neither_the_job_nor_its_collection_again(
    store: TableStore, queue: RecordingQueue, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The API hands over the job it just stored and the collection it read: the immediate
    dispatch reads no entity (it read the collection, the job, and the job again after the
    advance: three point reads), and what it returns is the job as stored."""
    job = make_job(store, "j", definition(T0, "Hour", count=3))
    collection = _collection(store, job)
    reads: list[str] = []
    real = TableClient.get_entity

    def counting(self: TableClient, *args: Any, **kwargs: Any) -> Any:
        reads.append(self.table_name)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(TableClient, "get_entity", counting)
    advanced = dispatch_if_due(store, queue, settings, job, collection, now=T0)
    monkeypatch.undo()

    assert reads == []
    assert advanced is not None and len(queue.sent) == 1
    assert advanced == reload(store, job)  # the ETag included: the API may write it next


def test_a_job_changed_since_the_api_stored_it_is_handled_as_a_tick_would(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    """The job handed over is stale (another writer changed it after the API stored it):
    the advance's ETag write fails, the job is re-read, and the occurrence is still sent
    once and the job advanced once."""
    job = make_job(store, "j", definition(T0, "Hour", count=3))
    collection = _collection(store, job)
    set_job(store, job, execution_count=7)  # a write the handed-over ETag does not know

    advanced = dispatch_if_due(store, queue, settings, job, collection, now=T0)

    assert advanced is not None and advanced.bookkeeping.occurrences == 1
    assert advanced.execution_count == 7  # the other writer's change is kept
    assert advanced == reload(store, job) and len(queue.sent) == 1
