"""The dispatcher under crashes, repeats and races: no occurrence lost, none advanced past
without its message, and every repeat sends the identical message (so the executor's
de-duplication by execution tag can drop it). Real Azurite tables and queue throughout;
failures are injected by `RecordingQueue`, a real ExecutionQueue subclass."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from scheduler_lib.config import Settings
from scheduler_lib.dispatch.tick import run_tick
from scheduler_lib.domain import Bookkeeping, JobRecord
from scheduler_lib.domain.messages import ExecutionMessage, parse_body
from scheduler_lib.store.dispatcher_state import get_dispatcher_state
from scheduler_lib.store.tables import TableStore
from tests.dispatch.support import (
    T0,
    RecordingQueue,
    SimulatedCrash,
    all_rows,
    definition,
    make_job,
    make_jobs,
    recreated_on_send,
    reload,
    set_job,
)

DUE = T0 + timedelta(seconds=30)
NEXT = DUE + timedelta(hours=1)


def _jobs(store: TableStore, n: int, *, per_second: int) -> list[JobRecord]:
    """`n` hourly jobs, `per_second` of them due at each second from DUE on (1: each sent
    alone; more: in one shard, sent in batches of that many)."""
    return [
        make_job(store, f"j{i:03d}", definition(DUE + timedelta(seconds=i // per_second)))
        for i in range(n)
    ]


def _assert_each_job_dispatched_once(
    store: TableStore, jobs: list[JobRecord], *queues: RecordingQueue
) -> None:
    """Every job advanced exactly once, its one occurrence sent, every copy identical."""
    due = {j.key: j.next_execution_time or DUE for j in jobs}
    expected = {j.key: ExecutionMessage.scheduled(j.key, due[j.key], 1).to_json() for j in jobs}
    bodies: dict[str, set[str]] = {}
    for queue in queues:
        for sent in queue.sent:
            bodies.setdefault(sent.message.job_key, set()).add(sent.body)
    assert bodies == {key: {body} for key, body in expected.items()}
    for job in jobs:
        stored = reload(store, job)
        nxt = due[job.key] + timedelta(hours=1)
        assert (stored.next_execution_time, stored.bookkeeping.occurrences) == (nxt, 1)
    assert all_rows(store) == sorted((j.key, due[j.key] + timedelta(hours=1)) for j in jobs)


ALONE = pytest.param(1, 8, id="alone")
#: Two jobs a second in one shard: ten batches, of which the first four are sent.
IN_BATCHES = pytest.param(2, 4, id="batches", marks=pytest.mark.shards(1))


@pytest.mark.parametrize(("per_second", "fail_after"), [ALONE, IN_BATCHES])
@pytest.mark.parametrize("workers", [pytest.param(1, id="sequential"), pytest.param(4, id="pool")])
def test_queue_failing_half_way_holds_the_cursor_and_the_next_tick_finishes(
    store: TableStore, settings: Settings, workers: int, per_second: int, fail_after: int
) -> None:
    jobs = _jobs(store, 20, per_second=per_second)
    failing = RecordingQueue(settings, fail_after=fail_after).ready()

    first = run_tick(store, failing, settings, now=T0, workers=workers)

    assert (first.messages_sent, first.queue_sends, first.failed) == (8, fail_after, 12)
    assert get_dispatcher_state(store).cursor == T0 - timedelta(minutes=1)  # before 09:00
    unsent = [j for j in jobs if j.key not in {s.message.job_key for s in failing.sent}]
    assert all(reload(store, j).next_execution_time == j.next_execution_time for j in unsent)

    healthy = RecordingQueue(settings).ready()
    second = run_tick(store, healthy, settings, now=T0 + timedelta(seconds=5), workers=workers)

    assert (second.messages_sent, second.failed, second.rows_read) == (12, 0, 12)
    _assert_each_job_dispatched_once(store, jobs, failing, healthy)


def test_crash_between_send_and_advance_resends_the_identical_message(
    store: TableStore, settings: Settings
) -> None:
    """The 4th send reaches the queue, then the worker dies before advancing that job."""
    jobs = _jobs(store, 6, per_second=1)
    crashing = RecordingQueue(
        settings, fail_after=3, failure=SimulatedCrash, crash_after_send=True
    ).ready()

    with pytest.raises(SimulatedCrash):
        run_tick(store, crashing, settings, now=T0, workers=1)

    assert len(crashing.sent) == 4
    victim = next(j for j in jobs if j.key == crashing.sent[-1].message.job_key)
    assert reload(store, victim).next_execution_time == victim.next_execution_time
    assert get_dispatcher_state(store).cursor is None  # the dead tick saved nothing

    rerun = RecordingQueue(settings).ready()
    run_tick(store, rerun, settings, now=T0, workers=1)

    resent = {s.message.job_key for s in rerun.sent}
    assert victim.key in resent
    assert len(resent) == 3  # the victim again, and the two never reached
    _assert_each_job_dispatched_once(store, jobs, crashing, rerun)


@pytest.mark.shards(1)
def test_crash_after_a_batch_was_sent_resends_its_identical_members(
    store: TableStore, settings: Settings
) -> None:
    """The batch of six reaches the queue, then the worker dies before any of them advanced:
    the next tick sends the same six again (the executor runs each tag once)."""
    jobs = _jobs(store, 6, per_second=6)
    crashing = RecordingQueue(
        settings, fail_after=0, failure=SimulatedCrash, crash_after_send=True
    ).ready()

    with pytest.raises(SimulatedCrash):
        run_tick(store, crashing, settings, now=T0, workers=1)

    assert [len(parse_body(body)) for body in crashing.bodies] == [6]
    assert all(reload(store, j).next_execution_time == DUE for j in jobs)  # none advanced

    rerun = RecordingQueue(settings).ready()
    report = run_tick(store, rerun, settings, now=T0, workers=1)

    assert (report.messages_sent, report.queue_sends) == (6, 1)
    _assert_each_job_dispatched_once(store, jobs, crashing, rerun)


@pytest.mark.parametrize(
    ("per_second", "fail_after", "resent"),
    [
        pytest.param(1, 2, 4, id="alone"),
        # two batches of three: the first is sent, the worker dies before the second, before
        # any job advanced: all six go again
        pytest.param(3, 1, 6, id="batches", marks=pytest.mark.shards(1)),
    ],
)
def test_crash_before_sending_loses_nothing(
    store: TableStore, settings: Settings, per_second: int, fail_after: int, resent: int
) -> None:
    jobs = _jobs(store, 6, per_second=per_second)
    crashing = RecordingQueue(settings, fail_after=fail_after, failure=SimulatedCrash).ready()

    with pytest.raises(SimulatedCrash):
        run_tick(store, crashing, settings, now=T0, workers=1)
    rerun = RecordingQueue(settings).ready()
    run_tick(store, rerun, settings, now=T0 + timedelta(seconds=40), workers=1)

    assert len(rerun.sent) == resent
    _assert_each_job_dispatched_once(store, jobs, crashing, rerun)


def test_two_ticks_racing(store: TableStore, settings: Settings) -> None:
    jobs = make_jobs(store, 60, DUE)
    queues = [RecordingQueue(settings).ready(), RecordingQueue(settings).ready()]
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def tick(queue: RecordingQueue) -> None:
        barrier.wait()
        try:
            run_tick(store, queue, settings, now=T0, workers=4)
        except BaseException as exc:  # reported below, not lost in the thread
            errors.append(exc)

    threads = [threading.Thread(target=tick, args=(q,)) for q in queues]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    _assert_each_job_dispatched_once(store, jobs, *queues)


def test_executor_writing_the_job_meanwhile_keeps_its_keys(
    store: TableStore, settings: Settings
) -> None:
    """The executor claims the occurrence right after the send: the dispatcher's ETag write
    fails, it re-reads and re-applies its advance without dropping the executor's claim."""
    job = make_job(store, "j", definition(DUE))

    def executor_claims(message: ExecutionMessage) -> None:
        current = reload(store, job)
        claimed = replace(current.bookkeeping, other={"claim": message.execution_tag})
        set_job(store, job, bookkeeping=claimed)

    queue = RecordingQueue(settings, on_send=executor_claims).ready()
    report = run_tick(store, queue, settings, now=T0)

    stored = reload(store, job)
    assert stored.bookkeeping == Bookkeeping(
        occurrences=1,
        sent=(datetime(2026, 3, 4, 9, 0, 30, tzinfo=UTC),),
        other={"claim": queue.sent[0].message.execution_tag},
    )
    assert stored.next_execution_time == NEXT
    assert report.job_entities_read == 2  # the first read and the re-read after the conflict
    assert all_rows(store) == [(job.key, NEXT)]


def test_job_rescheduled_during_the_tick_keeps_the_new_schedule(
    store: TableStore, settings: Settings
) -> None:
    """The API moves the job right after its message went out: the dispatcher loses the
    ETag race and must not overwrite the new schedule."""
    job = make_job(store, "j", definition(DUE))
    moved = T0 + timedelta(days=1)

    def api_reschedules(_: ExecutionMessage) -> None:
        set_job(store, job, definition=definition(moved), next_execution_time=moved)

    run_tick(store, RecordingQueue(settings, on_send=api_reschedules).ready(), settings, now=T0)

    stored = reload(store, job)
    assert (stored.next_execution_time, stored.bookkeeping.occurrences) == (moved, 0)


def test_a_job_whose_stored_definition_no_longer_parses_fails_alone(
    store: TableStore, settings: Settings
) -> None:
    """A corrupt stored schedule (no API would store it) must not stop the tick: the other
    jobs of its chunk are sent and moved on, and only its own minute is held back (its
    message may go out; every tick re-sends the same one, which the executor runs once)."""
    jobs = [make_job(store, f"j{i}", definition(DUE)) for i in range(3)]
    broken = definition(DUE)
    broken["recurrence"]["frequency"] = "Fortnight"
    set_job(store, jobs[1], definition=broken)
    queue = RecordingQueue(settings).ready()

    report = run_tick(store, queue, settings, now=T0)

    assert (report.messages_sent, report.failed) == (2, 1)
    assert {s.message.job_key for s in queue.sent} >= {jobs[0].key, jobs[2].key}
    assert [reload(store, j).next_execution_time for j in jobs] == [NEXT, DUE, NEXT]
    assert get_dispatcher_state(store).cursor == T0 - timedelta(minutes=1)
    assert (jobs[1].key, DUE) in all_rows(store)


def test_job_deleted_and_created_again_during_the_tick_gets_its_own_occurrence(
    store: TableStore, settings: Settings
) -> None:
    """The API deletes the job and creates it again (same schedule, a new incarnation) right
    after the tick sent the old one's message, which the executor drops as not the new job's.
    The tick must not advance the new job past that occurrence on the old one's behalf (it
    would be lost): it sends the new job's own message and advances it once."""
    old = make_job(store, "j", definition(DUE))
    old = set_job(store, old, incarnation="first")

    queue = RecordingQueue(settings, on_send=recreated_on_send(store, old, DUE)).ready()
    run_tick(store, queue, settings, now=T0)

    sent = [(s.message.incarnation, s.message.occurrence) for s in queue.sent]
    assert sent == [("first", DUE), ("second", DUE)]
    stored = reload(store, old)
    assert stored.incarnation == "second"
    assert (stored.next_execution_time, stored.bookkeeping.occurrences) == (NEXT, 1)
