"""The heartbeat's thread starts at its first beat (`beats.Beats.start` asks `later_calls`
for it), not when the attempt starts: an attempt over before that beat (most: an HTTP call of
tens of milliseconds) starts no thread, and one still running then beats as before. The same
for a batch's watchdog (`BatchWatchdog`), which beats by the same mechanism.

Real Azurite tables and queue. The heartbeat's first beat is asked of an instance of `LaterCalls`
that reads a clock the test moves, so when it falls due is the test's to say; the test
waits on an event the later thread sets after it, never on a sleep."""

from __future__ import annotations

import threading
from datetime import timedelta

from scheduler_lib.beats import Beats
from scheduler_lib.domain.executor_state import step_claim
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution import heartbeat, lifecycle
from scheduler_lib.execution.batch_watchdog import BatchWatchdog
from scheduler_lib.later_calls import LaterCalls
from scheduler_lib.store import TableStore
from scheduler_lib.store.execution_queue import ExecutionQueue
from scheduler_lib.store.jobs import find_job, put_job
from scheduler_lib.watchdog_choice import WatchdogChoice
from tests.execution.harness import T0, FakeClock, http_action, make_job
from tests.support.later import Moved, settled

_THREE_S = timedelta(seconds=3)


def _claimed_beat(
    store: TableStore, clock: FakeClock
) -> tuple[heartbeat.Heartbeat, ExecutionMessage, Moved, LaterCalls]:
    """A claimed attempt's heartbeat, its first beat asked of a `LaterCalls` on a clock
    the test moves (that clock, and it, returned)."""
    moment = Moved()
    later = LaterCalls(moment)
    job = make_job(store, http_action("http://127.0.0.1:9/"))
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    claimed = put_job(store, lifecycle.with_claim(job, message, "m1", now=T0), etag=job.etag)
    beat = heartbeat.Heartbeat(store, message, "m1", clock, interval=3.0, later=later)
    beat.claim_with(claimed)
    return beat, message, moment, later


def _told_of_beats(beats: Beats) -> threading.Event:
    """An event set once `beats` made a beat (the test waits for it, not for a time)."""
    beaten, first = threading.Event(), beats._beat

    def beat_and_say() -> bool:
        going_on = first()
        beaten.set()
        return going_on

    beats._beat = beat_and_say  # type: ignore[method-assign]  # the test waits for the beat
    return beaten


def test_an_attempt_over_before_its_first_beat_starts_no_thread(
    store: TableStore, clock: FakeClock
) -> None:
    beat, message, moment, later = _claimed_beat(store, clock)
    beat.start()
    assert later.pending() == 1  # the first beat, asked for
    known = beat.stop()  # the attempt ended before it
    moment.now += 3.0
    settled(later)  # the first beat's moment came: it found the heartbeat stopped

    assert later.pending() == 0
    assert beat._thread.ident is None  # never started
    stored = find_job(store, message.job_key)
    assert known is not None and stored is not None and known.etag == stored.etag


def test_an_attempt_still_running_at_its_first_beat_renews_its_lease(
    store: TableStore, clock: FakeClock
) -> None:
    beat, message, moment, later = _claimed_beat(store, clock)
    claimed = find_job(store, message.job_key)
    assert claimed is not None
    before = step_claim(claimed, message)
    beaten = _told_of_beats(beat)
    beat.start()
    clock.advance(_THREE_S)  # the renewal reads the attempt's clock 3 s on
    moment.now += 3.0
    settled(later)  # the thread is started, and beats at once
    assert beaten.wait(10)
    renewed = beat.stop()

    assert beat._thread.ident is not None and not beat.lost
    assert renewed is not None
    after = step_claim(renewed, message)
    assert before is not None and after is not None
    assert before.lease_until is not None
    assert after.lease_until == before.lease_until + _THREE_S  # renewed at the clock's T0 + 3 s
    stored = find_job(store, message.job_key)
    assert stored is not None and renewed.etag == stored.etag


def _batch_watchdog(
    queue: ExecutionQueue, clock: FakeClock
) -> tuple[BatchWatchdog, Moved, LaterCalls]:
    """A batch of two on-time members' watchdog, its first beat asked of a `LaterCalls` on
    a clock the test moves."""
    moment = Moved()
    later = LaterCalls(moment)
    members = [ExecutionMessage.scheduled(f"Sub-1/rg/coll/j{i}", T0, 1) for i in range(2)]
    return BatchWatchdog(queue, members, clock, interval=3.0, later=later), moment, later


def test_a_batch_over_before_its_first_beat_starts_no_watchdog_thread(
    queue: ExecutionQueue, clock: FakeClock
) -> None:
    shared, moment, later = _batch_watchdog(queue, clock)
    with shared.kept(WatchdogChoice.CLAIM, horizon=_THREE_S):
        assert shared.covered == {0, 1} and shared.sent is not None
        sent = shared.sent
        assert later.pending() == 1  # the first beat, asked for
    moment.now += 3.0
    settled(later)  # the first beat's moment came: it found the watchdog stopped

    assert shared._thread.ident is None  # never started
    assert shared.sent is sent  # never kept hidden again: no queue update


def test_a_batch_still_running_at_its_first_beat_keeps_its_watchdog_hidden(
    queue: ExecutionQueue, clock: FakeClock
) -> None:
    shared, moment, later = _batch_watchdog(queue, clock)
    beaten = _told_of_beats(shared)
    with shared.kept(WatchdogChoice.CLAIM, horizon=_THREE_S):
        sent = shared.sent
        moment.now += 3.0
        settled(later)  # the thread is started, and beats at once
        assert beaten.wait(10)
    assert shared._thread.ident is not None
    assert sent is not None and shared.sent is not None
    assert shared.sent.id == sent.id and shared.sent.pop_receipt != sent.pop_receipt  # updated
