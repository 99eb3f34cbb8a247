"""Immediate dispatch of a job whose occurrence the next tick would see too late, against
real storage and a real queue (Azurite)."""

from datetime import timedelta

import pytest

from scheduler_lib.config import Settings
from scheduler_lib.dispatch.now import dispatch_if_due, due_before_next_tick
from scheduler_lib.dispatch.tick import run_tick
from scheduler_lib.store.tables import TableStore
from tests.dispatch.support import (
    T0,
    RecordingQueue,
    all_rows,
    definition,
    make_collection,
    make_job,
)


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
    advanced = dispatch_if_due(store, queue, settings, job, now=T0)
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
    assert dispatch_if_due(store, queue, settings, job, now=T0) is None
    assert queue.sent == []
