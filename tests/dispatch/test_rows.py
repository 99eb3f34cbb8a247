"""Due-index rows the dispatcher must not trust (stale hints) and rows it must send as they
are (parked retries). Real Azurite tables and queue."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from scheduler_lib.config import Settings
from scheduler_lib.dispatch.tick import run_tick
from scheduler_lib.domain.jobs import JobRecord
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.store.due_index import add_due, park_message
from scheduler_lib.store.jobs import delete_job
from scheduler_lib.store.tables import TableStore
from tests.dispatch.support import (
    T0,
    RecordingQueue,
    all_rows,
    definition,
    make_collection,
    make_job,
    reload,
    set_job,
)

DUE = T0 + timedelta(seconds=30)
MOVED = T0 + timedelta(hours=5)


def _delete(store: TableStore, job: JobRecord) -> None:
    delete_job(store, job)


def _disable(store: TableStore, job: JobRecord) -> None:
    set_job(store, job, state="Disabled")


def _disable_collection(store: TableStore, job: JobRecord) -> None:
    make_collection(store, "c1", enabled=False)


def _suspend_collection(store: TableStore, job: JobRecord) -> None:
    make_collection(store, "c1", state="Suspended")


def _complete(store: TableStore, job: JobRecord) -> None:
    set_job(store, job, state="Completed", next_execution_time=None)


def _reschedule(store: TableStore, job: JobRecord) -> None:
    """What the API does: new definition and next time, new row; the old row stays."""
    set_job(store, job, definition=definition(MOVED), next_execution_time=MOVED)
    add_due(store, job.key, MOVED)


@pytest.mark.parametrize(
    ("change", "rows_left"),
    [
        pytest.param(_delete, [], id="deleted-job"),
        pytest.param(_disable, [], id="disabled-job"),
        pytest.param(_disable_collection, [], id="disabled-collection"),
        pytest.param(_suspend_collection, [], id="suspended-collection"),
        pytest.param(_complete, [], id="completed-job"),
        pytest.param(_reschedule, [MOVED], id="rescheduled-job"),
    ],
)
def test_stale_row_is_dropped_without_a_message(
    store: TableStore,
    queue: RecordingQueue,
    settings: Settings,
    change: Callable[[TableStore, JobRecord], None],
    rows_left: list,
) -> None:
    job = make_job(store, "j", definition(DUE))
    healthy = make_job(store, "other", definition(DUE), collection=make_collection(store, "c2"))
    change(store, job)

    report = run_tick(store, queue, settings, now=T0)

    assert [s.message.job_key for s in queue.sent] == [healthy.key]
    assert (report.stale_dropped, report.messages_sent, report.failed) == (1, 1, 0)
    assert report.job_entities_read == 2
    next_hour = DUE + timedelta(hours=1)
    assert all_rows(store) == sorted([(healthy.key, next_hour)] + [(job.key, t) for t in rows_left])


def test_stale_row_of_an_enabled_job_repairs_its_missing_row(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    """The API moved the job but died before writing the new row: the stale row is the last
    trace of the job in the index, so the dispatcher writes the row the job waits for."""
    job = make_job(store, "j", definition(DUE))
    set_job(store, job, definition=definition(MOVED), next_execution_time=MOVED)

    run_tick(store, queue, settings, now=T0)

    assert queue.sent == []
    assert all_rows(store) == [(job.key, MOVED)]


def test_rescheduled_into_the_same_ticks_range_reads_the_job_once(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    job = make_job(store, "j", definition(DUE))
    sooner = T0 + timedelta(seconds=70)
    set_job(store, job, definition=definition(sooner), next_execution_time=sooner)
    add_due(store, job.key, sooner)

    report = run_tick(store, queue, settings, now=T0)

    assert [s.message.occurrence for s in queue.sent] == [sooner]
    assert (report.rows_read, report.job_entities_read, report.stale_dropped) == (2, 1, 1)
    assert reload(store, job).next_execution_time == sooner + timedelta(hours=1)


def test_parked_message_is_sent_as_it_is_when_due(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    """A retry whose interval exceeded the queue's 7-day limit waits in the index."""
    job = make_job(store, "j", definition(T0 + timedelta(days=3)))
    retry = ExecutionMessage.scheduled(job.key, T0 - timedelta(days=8), 4).next_attempt()
    park_message(store, job.key, retry.execution_tag, retry.to_json(), DUE)
    park_message(store, job.key, "later", retry.to_json(), DUE + timedelta(days=1))

    report = run_tick(store, queue, settings, now=T0)

    [sent] = queue.sent
    assert (sent.body, sent.visible_at) == (retry.to_json(), DUE)
    assert (report.parked_sent, report.job_entities_read, report.messages_sent) == (1, 0, 0)
    later = DUE + timedelta(days=1)
    assert all_rows(store) == sorted(
        [(f"{job.key}|later", later), (job.key, T0 + timedelta(days=3))]
    )


def test_unreadable_parked_message_is_dropped_not_retried_forever(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    park_message(store, "0000-sub|rg1|c1|j", "tag", "not json", DUE)

    report = run_tick(store, queue, settings, now=T0)

    assert (report.parked_sent, report.stale_dropped, report.failed) == (0, 1, 0)
    assert queue.sent == []
    assert all_rows(store) == []
