"""An idle shard costs no dispatch invocation: the coordinator asks each shard whether it has
a row in the minutes its pair would read and hands out pairs only to those that do (or have
no cursor yet). Every guarantee of the fan-out still holds for a shard with work: the
look-ahead minute, a row written after the tick asked, a failed minute, a parked message,
catch-up after downtime. Real Azurite tables and queues (the real `Runtime`, its dispatcher
sending to a recording queue), the clock a parameter."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from scheduler_lib import storage_calls
from scheduler_lib.config import Settings
from scheduler_lib.dispatch import CoordinatorReport
from scheduler_lib.domain import JobRecord
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.runtime import Runtime
from scheduler_lib.store import get_dispatcher_state, park_message
from scheduler_lib.store.due_index import shard_of
from tests.dispatch.support import T0, RecordingQueue, definition, make_collection, make_job, reload

#: Table requests one idle minute may make, everything included: two queries for rows in the
#: format before sharding, one of the shards' states, one range scan per shard (8), the
#: dispatcher's state, and the upkeep's three queries (history purge, metrics rows, deadlines).
IDLE_TABLE_REQUESTS = 15


class Minutes:
    """The real runtime on a clock the test moves, its dispatcher's sends recorded."""

    def __init__(self, settings: Settings, queue: RecordingQueue | None = None) -> None:
        self.now = T0
        self.runtime = Runtime(settings, clock=lambda: self.now)
        self.runtime.ensure_storage()
        make_collection(self.runtime.store)
        self.use(queue or RecordingQueue(settings).ready())

    def use(self, queue: RecordingQueue) -> RecordingQueue:
        self.queue = queue
        self.runtime.dispatcher = replace(self.runtime.dispatcher, queue=queue)
        return queue

    def tick(self, at: datetime) -> CoordinatorReport:
        """The timer function at `at`, then the dispatch function for each pair it sent."""
        self.now = at
        report = self.runtime.coordinate()
        self.runtime.drain_dispatch()
        return report

    def job(self, name: str, due: datetime) -> JobRecord:
        """An hourly job whose first occurrence is `due`, its row written as the API does."""
        return make_job(self.runtime.store, name, definition(due), created=self.now)

    def shard(self, job: JobRecord) -> int:
        return shard_of(job.key, self.runtime.settings.dispatch_shards)


def _shards(report: CoordinatorReport) -> list[int]:
    return [shard for pair in report.pairs for shard in pair.shards]


def test_an_idle_minute_sends_no_control_message_and_few_table_requests(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(storage_calls.COUNT_CALLS_SETTING, str(tmp_path / "calls.json"))
    minutes = Minutes(settings)
    first = minutes.tick(T0)  # the first tick: every shard gets its cursor (one pair: no rows)
    assert _shards(first) == list(range(settings.dispatch_shards))

    before = Counter(storage_calls.snapshot())
    report = minutes.tick(T0 + timedelta(minutes=1))
    made = Counter(storage_calls.snapshot()) - before

    assert report.pairs == []
    assert minutes.runtime.dispatch_queue.receive(max_messages=32) == []
    assert sum(n for key, n in made.items() if "[queue POST" in key) == 0  # nothing sent
    assert sum(n for key, n in made.items() if "[table" in key) <= IDLE_TABLE_REQUESTS


def test_a_row_in_one_shard_is_dispatched_on_time_by_that_shard_alone(settings: Settings) -> None:
    minutes = Minutes(settings)
    minutes.tick(T0)
    minutes.now = T0 + timedelta(seconds=30)
    due = T0 + timedelta(minutes=2, seconds=30)  # beyond the API's look-ahead: a row only
    job = minutes.job("soon", due)

    report = minutes.tick(T0 + timedelta(minutes=1))  # reads through the look-ahead minute

    assert _shards(report) == [minutes.shard(job)]
    [sent] = minutes.queue.sent
    assert (sent.message.job_key, sent.visible_at) == (job.key, due)  # on time
    assert reload(minutes.runtime.store, job).next_execution_time == due + timedelta(hours=1)
    assert minutes.tick(T0 + timedelta(minutes=2)).pairs == []  # its row moved an hour on


def test_rows_written_around_a_tick_are_dispatched_not_lost(settings: Settings) -> None:
    """One row written just before the tick asks (due in the next second), one written just
    after it asked, into a minute it covered: the first is dispatched by that tick, the
    second by the next one (late, within the grace period), each by its shard alone."""
    minutes = Minutes(settings)
    minutes.tick(T0)
    minutes.now = T0 + timedelta(seconds=59)
    before = minutes.job("before", T0 + timedelta(minutes=1, seconds=1))

    at = minutes.tick(T0 + timedelta(minutes=1))
    minutes.now = T0 + timedelta(minutes=1, seconds=1)
    after = minutes.job("after", T0 + timedelta(minutes=1, seconds=40))
    assert [s.message.job_key for s in minutes.queue.sent] == [before.key]
    following = minutes.tick(T0 + timedelta(minutes=2))

    assert _shards(at) == [minutes.shard(before)]
    assert _shards(following) == [minutes.shard(after)]
    assert [s.message.job_key for s in minutes.queue.sent] == [before.key, after.key]
    late = minutes.queue.sent[1]
    assert (late.visible_at, late.now) == (after.next_execution_time, T0 + timedelta(minutes=2))


def test_a_failed_minute_keeps_its_shard_dispatched_until_it_succeeds(settings: Settings) -> None:
    minutes = Minutes(settings)
    minutes.tick(T0)
    due = T0 + timedelta(minutes=2, seconds=30)
    job = minutes.job("flaky", due)
    minutes.use(RecordingQueue(settings, fail_after=0).ready())  # a storage outage

    failed = minutes.tick(T0 + timedelta(minutes=1))
    queue = minutes.use(RecordingQueue(settings).ready())
    retried = minutes.tick(T0 + timedelta(minutes=2))

    assert _shards(failed) == _shards(retried) == [minutes.shard(job)]
    [sent] = queue.sent
    assert (sent.message.job_key, sent.visible_at) == (job.key, due)  # still on time


def test_a_parked_message_gets_its_shard_a_pair_when_its_minute_comes(
    settings: Settings,
) -> None:
    minutes = Minutes(settings)
    minutes.tick(T0)
    job = minutes.job("retried", T0 + timedelta(days=1))
    due = T0 + timedelta(minutes=3, seconds=10)
    message = ExecutionMessage.scheduled(job.key, T0, 1, job.incarnation)
    park_message(minutes.runtime.store, job.key, "retry-1", message.to_json(), due)

    assert minutes.tick(T0 + timedelta(minutes=1)).pairs == []  # its minute not read yet
    report = minutes.tick(T0 + timedelta(minutes=2))

    assert _shards(report) == [minutes.shard(job)]
    [sent] = minutes.queue.sent
    assert (sent.message.execution_tag, sent.visible_at) == (message.execution_tag, due)


def test_an_idle_shard_still_catches_up_after_downtime(settings: Settings) -> None:
    """A shard idle for minutes (its cursor left behind) and then down: its occurrence missed
    by more than the grace period is found and postponed, not run late and not skipped."""
    minutes = Minutes(settings)
    minutes.tick(T0)
    job = minutes.job("missed", T0 + timedelta(minutes=10))
    for minute in range(1, 5):
        assert minutes.tick(T0 + timedelta(minutes=minute)).pairs == []

    back = minutes.tick(T0 + timedelta(minutes=40))  # down from 09:05 to 09:40

    assert _shards(back) == [minutes.shard(job)]
    assert minutes.queue.sent == []  # postponed
    stored = reload(minutes.runtime.store, job)
    assert stored.next_execution_time == T0 + timedelta(minutes=70)


def test_the_health_state_follows_the_last_tick_when_shards_are_skipped(
    settings: Settings,
) -> None:
    """The dispatcher's state (what `GET /api/health` shows) sums only the pairs since the
    previous tick, not a skipped shard's last pair of long ago, and its cursor moves on with
    the skipped shards (nothing is left in their windows)."""
    minutes = Minutes(settings)
    minutes.tick(T0)
    minutes.job("once", T0 + timedelta(minutes=2, seconds=30))
    minutes.tick(T0 + timedelta(minutes=1))  # its shard sends the occurrence
    store = minutes.runtime.store

    minutes.tick(T0 + timedelta(minutes=2))
    assert get_dispatcher_state(store).last_tick.counts["messages_sent"] == 1
    minutes.tick(T0 + timedelta(minutes=3))

    state = get_dispatcher_state(store)
    assert (state.last_tick.counts["messages_sent"], state.last_tick.counts["pairs_sent"]) == (0, 0)
    assert state.cursor == T0 + timedelta(minutes=4)  # through the look-ahead minute
