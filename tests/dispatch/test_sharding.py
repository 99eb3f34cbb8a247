"""The sharded due index and the fanned-out tick: a coordinator hands out (minute, shard)
pairs, each handled under its shard's lease. Every guarantee of the single tick still holds
with duplicate control messages, two workers on one pair, a worker killed mid-pair and a
coordinator tick run twice; rows in the format before sharding are moved, never lost.
Real Azurite tables and queues throughout."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from azure.data.tables import UpdateMode

from scheduler_lib.config import Settings
from scheduler_lib.dispatch import LEASE, ControlMessage, PairOutcome
from scheduler_lib.dispatch.coordinator import coordinate
from scheduler_lib.dispatch.pair import dispatch_pair
from scheduler_lib.dispatch.shard import run_shards
from scheduler_lib.dispatch.tick import run_tick
from scheduler_lib.domain import JobRecord
from scheduler_lib.errors import ValidationError
from scheduler_lib.runtime import Runtime
from scheduler_lib.store import (
    DispatcherState,
    acquire_shard,
    get_dispatcher_state,
    get_shard_state,
    migrate_unsharded,
    minute_key,
    save_dispatcher_state,
)
from scheduler_lib.store.due_index import TABLE as DUE_TABLE
from scheduler_lib.store.due_index import partition_key, shard_of
from scheduler_lib.store.tables import TableStore
from tests.dispatch.support import (
    T0,
    RecordingQueue,
    all_rows,
    definition,
    make_collection,
    make_job,
    make_jobs,
    reload,
)
from tests.test_config import QUEUES

DUE = T0 + timedelta(seconds=30)
NEXT = DUE + timedelta(hours=1)


def _each_sent_once(store: TableStore, jobs: list[JobRecord], *queues: RecordingQueue) -> None:
    sent = Counter(s.message.execution_tag for q in queues for s in q.sent)
    assert sorted(sent.values()) == [1] * len(jobs)  # no occurrence doubled...
    keys = {j.key for j in jobs}
    assert {s.message.job_key for q in queues for s in q.sent} == keys  # ...or lost
    nxt = {j.key: (j.next_execution_time or DUE) + timedelta(hours=1) for j in jobs}
    for job in jobs:
        stored = reload(store, job)
        assert (stored.next_execution_time, stored.bookkeeping.occurrences) == (nxt[job.key], 1)
    assert [r for r in all_rows(store) if r[0] in keys] == sorted(nxt.items())


def _pair(store: TableStore, job_key: str, now: datetime = T0) -> ControlMessage:
    return ControlMessage(
        minute_key(now), (shard_of(job_key, store.settings.dispatch_shards),), now
    )


def test_a_minute_is_spread_over_the_shards_by_a_stable_hash(store: TableStore) -> None:
    jobs = make_jobs(store, 40, DUE)
    partitions = Counter(
        e["PartitionKey"] for e in store.table(DUE_TABLE).list_entities(select=["PartitionKey"])
    )
    shards = store.settings.dispatch_shards
    assert set(partitions) <= {partition_key(s, minute_key(DUE)) for s in range(shards)}
    assert len(partitions) > shards // 2 and max(partitions.values()) < len(jobs)
    # Stable across processes and releases: crc32, not Python's salted hash.
    assert shard_of("0000-sub|rg1|c1|j000", 8) == shard_of("0000-sub|rg1|c1|j000|tag", 8)
    assert [shard_of(j.key, shards) for j in jobs] == [shard_of(j.key, shards) for j in jobs]


def test_a_duplicate_control_message_does_nothing(store: TableStore, settings: Settings) -> None:
    [job] = make_jobs(store, 1, DUE)
    pair = _pair(store, job.key)
    first, second = RecordingQueue(settings).ready(), RecordingQueue(settings).ready()

    done = dispatch_pair(store, first, settings, pair, owner="a", now=T0)
    again = dispatch_pair(store, second, settings, pair, owner="b", now=T0 + timedelta(seconds=2))

    assert (done.outcome, again.outcome) == (PairOutcome.DONE, PairOutcome.DUPLICATE)
    assert second.sent == []
    _each_sent_once(store, [job], first, second)


def test_a_pair_whose_shard_is_leased_waits_and_the_lease_ends(
    store: TableStore, settings: Settings
) -> None:
    """Two workers on one pair: the second finds the shard leased and sends nothing; a
    holder that died (took the lease, never gave it back) loses the shard when it expires."""
    [job] = make_jobs(store, 1, DUE)
    pair = _pair(store, job.key)
    lease, _ = acquire_shard(store, pair.shard, owner="dead", now=T0, duration=LEASE)
    assert lease is not None
    queue = RecordingQueue(settings).ready()

    busy = dispatch_pair(store, queue, settings, pair, owner="b", now=T0 + LEASE / 2)
    assert (busy.outcome, busy.busy_until, queue.sent) == (PairOutcome.BUSY, T0 + LEASE, [])

    later = T0 + LEASE + timedelta(seconds=1)
    taken = dispatch_pair(store, queue, settings, pair, owner="b", now=later)
    assert taken.outcome is PairOutcome.DONE
    _each_sent_once(store, [job], queue)
    assert get_shard_state(store, pair.shard).owner == ""  # given back


def test_a_worker_killed_mid_pair_loses_nothing(store: TableStore, settings: Settings) -> None:
    """Killed after sending and advancing some jobs, holding the lease: the pair is taken
    over when the lease expires, the rest is sent, nothing twice with a different body. (Each
    job due at a second of its own: each is sent alone, and half of them can be.)"""
    jobs = [make_job(store, f"j{i:03d}", definition(DUE + timedelta(seconds=i))) for i in range(30)]
    victims = [j for j in jobs if shard_of(j.key, settings.dispatch_shards) == 0]
    pair = ControlMessage(minute_key(T0), (0,), T0)
    killed = RecordingQueue(settings).ready()
    # The killed worker's work: its lease, and half of the shard's jobs dispatched.
    acquire_shard(store, 0, owner="killed", now=T0, duration=LEASE)
    fail_after = len(victims) // 2
    crashing = RecordingQueue(settings, fail_after=fail_after).ready()
    report = run_shards(store, crashing, settings, {0: None}, now=T0, workers=1)
    assert report.messages_sent == fail_after  # the rest failed: as if the worker had died
    killed.sent.extend(crashing.sent)

    successor = RecordingQueue(settings).ready()
    assert dispatch_pair(store, successor, settings, pair, owner="next", now=T0).outcome is (
        PairOutcome.BUSY
    )
    after = T0 + LEASE + timedelta(seconds=5)
    assert dispatch_pair(store, successor, settings, pair, owner="next", now=after).outcome is (
        PairOutcome.DONE
    )
    _each_sent_once(store, victims, killed, successor)


def _runtime(settings: Settings, n: int) -> tuple[Runtime, RecordingQueue, list[JobRecord]]:
    """The real runtime at T0, its dispatcher sending to a recording queue, `n` jobs due."""
    runtime = Runtime(settings, clock=lambda: T0)
    runtime.ensure_storage()
    make_collection(runtime.store)
    queue = RecordingQueue(settings).ready()
    runtime.dispatcher = replace(runtime.dispatcher, queue=queue)
    return runtime, queue, make_jobs(runtime.store, n, DUE)


def test_a_coordinator_tick_run_twice_sends_each_occurrence_once(settings: Settings) -> None:
    runtime, queue, jobs = _runtime(settings, 20)

    first = runtime.coordinate()
    second = runtime.coordinate()
    results = runtime.drain_dispatch()

    # 20 rows between them, no shard with a cursor yet: every shard in one pair, both times.
    assert first.pairs == second.pairs
    assert [p.shards for p in first.pairs] == [tuple(range(settings.dispatch_shards))]
    assert Counter(r.outcome for r in results) == {
        PairOutcome.DONE: 1,
        PairOutcome.DUPLICATE: 1,
    }
    _each_sent_once(runtime.store, jobs, queue)


def test_runtime_tick_drains_its_control_messages_deterministically(settings: Settings) -> None:
    runtime, queue, jobs = _runtime(settings, 12)

    report = runtime.tick()

    assert (report.rows_read, report.messages_sent, report.failed) == (12, 12, 0)
    assert runtime.dispatch_queue.receive(max_messages=32) == []
    _each_sent_once(runtime.store, jobs, queue)


def _legacy_row(store: TableStore, job_key: str, due: datetime, **extra: str) -> None:
    """A row exactly as the dispatcher wrote it before sharding: PartitionKey = the minute."""
    store.table(DUE_TABLE).upsert_entity(
        {"PartitionKey": minute_key(due), "RowKey": job_key, "Due": due.astimezone(UTC), **extra},
        mode=UpdateMode.REPLACE,
    )


def test_an_unsharded_due_index_is_moved_on_the_first_tick_and_nothing_is_lost(
    store: TableStore, settings: Settings
) -> None:
    """A deployed app upgrades: its due index holds rows in the format before sharding (a
    job due now, one due tomorrow, a parked retry). The first tick moves them into their
    shards and dispatches what is due; the rest stays indexed."""
    jobs = make_jobs(store, 10, DUE)
    later = make_job(store, "tomorrow", definition(T0 + timedelta(days=1)))
    for entity in list(store.table(DUE_TABLE).list_entities()):
        store.table(DUE_TABLE).delete_entity(entity["PartitionKey"], entity["RowKey"])
    for job in jobs:
        _legacy_row(store, job.key, DUE, Incarnation=job.incarnation)
    _legacy_row(store, later.key, T0 + timedelta(days=1))
    assert all_rows(store) == []  # a sharded read does not see them

    queue = RecordingQueue(settings).ready()
    report = run_tick(store, queue, settings, now=T0)

    assert report.messages_sent == 10
    _each_sent_once(store, jobs, queue)
    keys = [e["PartitionKey"] for e in store.table(DUE_TABLE).list_entities()]
    assert all(k.startswith("s") for k in keys)  # no row left in the old format
    assert (later.key, T0 + timedelta(days=1)) in all_rows(store)
    assert migrate_unsharded(store) == 0  # once moved, the check finds nothing


def test_fewer_shards_moves_the_rows_of_the_shards_that_went(
    store: TableStore, settings: Settings
) -> None:
    jobs = make_jobs(store, 16, DUE)
    fewer = replace(settings, dispatch_shards=2)
    narrow = TableStore(fewer)

    moved = migrate_unsharded(narrow)

    assert moved == sum(shard_of(j.key, settings.dispatch_shards) >= 2 for j in jobs) > 0
    queue = RecordingQueue(fewer).ready()
    assert run_tick(narrow, queue, fewer, now=T0).messages_sent == 16
    assert all_rows(narrow) == sorted((j.key, NEXT) for j in jobs)


@pytest.mark.parametrize("value", ["0", "65", "eight"])
def test_a_bad_shard_count_is_refused_by_name(value: str) -> None:
    with pytest.raises(ValidationError) as err:
        Settings.from_env({**QUEUES, "SCHEDULER_DISPATCH_SHARDS": value})
    assert err.value.target == "SCHEDULER_DISPATCH_SHARDS"


def test_an_upgrade_keeps_the_cursor_from_before_sharding_until_every_shard_has_one(
    store: TableStore, settings: Settings
) -> None:
    """The first ticks after an upgrade: shards without a cursor of their own read from the
    dispatcher's cursor from before sharding, so the coordinator must not erase it while
    any shard still needs it, or an occurrence missed during downtime is skipped instead of
    postponed (found late by the consistency check, if at all)."""
    make_collection(store)
    [job] = make_jobs(store, 1, DUE)
    before = T0 - timedelta(minutes=1)  # the last tick before the app went down
    save_dispatcher_state(store, DispatcherState(cursor=before, last_tick_at=before))
    back = T0 + timedelta(minutes=67)  # an hour of downtime, then the upgraded app

    report = coordinate(store, RecordingQueue(settings).ready(), settings, now=back)

    assert get_dispatcher_state(store).cursor == before
    queue = RecordingQueue(settings).ready()
    results = [
        dispatch_pair(store, queue, settings, pair, owner=f"w{pair.shard}", now=back)
        for pair in report.pairs
    ]
    assert sum(r.report.postponed for r in results if r.report is not None) == 1
    assert queue.sent == []  # missed by more than the grace period: postponed, not run late
    # 09:00:30 and 10:00:30 were missed during the downtime: the next run is 11:00:30
    assert reload(store, job).next_execution_time == DUE + timedelta(hours=2)
