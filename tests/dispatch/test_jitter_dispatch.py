"""The dispatcher and `maxJitter`: an occurrence's message becomes visible at its jittered
start, still names the scheduled occurrence (tag, number), and after downtime its lateness
is judged against the jittered start. Real Azurite tables and queue; time passed as `now`."""

from __future__ import annotations

from datetime import datetime, timedelta

from scheduler_lib.config import Settings
from scheduler_lib.dispatch.tick import run_tick
from scheduler_lib.domain import JobRecord, job_key
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.schedule.jitter import jittered_start
from scheduler_lib.store.history import list_history
from scheduler_lib.store.tables import TableStore
from tests.dispatch.support import RG, SUB, T0, RecordingQueue, definition, make_job, reload

DUE = T0 + timedelta(seconds=30)
CREATED = T0 - timedelta(minutes=10)


def _last_tick_before_downtime(store: TableStore, settings: Settings) -> None:
    """A tick at 08:58 (nothing due yet) leaves the cursor at 08:59."""
    run_tick(store, RecordingQueue(settings), settings, now=T0 - timedelta(minutes=2))


def _jittered_job(store: TableStore, *, at_least: timedelta) -> tuple[datetime, JobRecord]:
    """A daily job with maxJitter PT1H whose first occurrence starts `at_least` late: the
    first name (of a fixed list) whose offset is that large."""
    props = {**definition(DUE, "Day"), "maxJitter": "PT1H"}
    for index in range(100):
        name = f"report{index}"
        start = jittered_start(job_key(SUB, RG, "c1", name), timedelta(hours=1), DUE)
        if start - DUE >= at_least:
            return start, make_job(store, name, props, created=CREATED)
    raise AssertionError("no name with such an offset")


def test_the_message_is_visible_at_the_jittered_start_and_names_the_occurrence(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    start, job = _jittered_job(store, at_least=timedelta(minutes=1))

    run_tick(store, queue, settings, now=T0)

    [sent] = queue.sent
    assert sent.visible_at == start and sent.message.start_at == start
    assert sent.message.occurrence == DUE  # the history and the tag name the occurrence
    scheduled = ExecutionMessage.scheduled(job.key, DUE, 1)
    assert sent.message.execution_tag == scheduled.execution_tag
    assert reload(store, job).next_execution_time == DUE + timedelta(days=1)


def test_after_downtime_lateness_counts_from_the_jittered_start(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    """Eight minutes after the occurrence (beyond the PT5M grace period of its scheduled
    time) an occurrence that starts 10+ minutes late is still on time: it is sent."""
    _last_tick_before_downtime(store, settings)
    start, _ = _jittered_job(store, at_least=timedelta(minutes=10))

    report = run_tick(store, queue, settings, now=DUE + timedelta(minutes=8))

    assert report.postponed == 0
    [sent] = queue.sent
    assert (sent.message.occurrence, sent.visible_at) == (DUE, start)


def test_a_jittered_start_missed_by_more_than_the_grace_period_is_postponed(
    store: TableStore, queue: RecordingQueue, settings: Settings
) -> None:
    _last_tick_before_downtime(store, settings)
    start, job = _jittered_job(store, at_least=timedelta(minutes=1))

    report = run_tick(store, queue, settings, now=start + timedelta(minutes=6))

    assert (report.postponed, queue.sent) == (1, [])
    [entry], _ = list_history(store, job.key)
    assert (entry.status, entry.expected_execution_time) == ("Postponed", DUE)
