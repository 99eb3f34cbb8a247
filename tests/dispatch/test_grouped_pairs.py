"""Pairs of several shards: the coordinator groups shards with few rows into one pair, so
occurrences of one second share an execution message across shards, and a large minute
still gets a pair per shard. A shard another worker holds is left out of a pair and sent
again alone; one already handled for the tick is skipped. Real Azurite tables and queues.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from datetime import timedelta

import pytest

from scheduler_lib.config import Settings
from scheduler_lib.dispatch import LEASE, ControlMessage, PairOutcome
from scheduler_lib.dispatch import coordinator as coordinator_module
from scheduler_lib.dispatch.coordinator import coordinate, group_shards
from scheduler_lib.dispatch.pair import dispatch_pair
from scheduler_lib.errors import ValidationError
from scheduler_lib.runtime import Runtime
from scheduler_lib.store import acquire_shard, get_shard_state, minute_key, release_shard
from scheduler_lib.store.due_index import shard_of
from scheduler_lib.store.tables import TableStore
from tests.dispatch.support import T0, RecordingQueue, make_collection, make_jobs

DUE = T0 + timedelta(seconds=30)


def test_shards_are_grouped_in_order_up_to_the_rows_a_pair_takes() -> None:
    assert group_shards([], 10) == []
    assert group_shards([(0, 3), (1, 0), (2, 7), (5, 1)], 10) == [[0, 1, 2], [5]]
    # A shard over the limit is a pair alone, and so is the next that would not fit.
    assert group_shards([(0, 4), (1, 12), (2, 9), (3, 1)], 10) == [[0], [1], [2, 3]]
    assert group_shards([(4, 10), (6, 10)], 10) == [[4], [6]]


def _sent_once(queue: RecordingQueue, keys: set[str]) -> None:
    tags = Counter(s.message.execution_tag for s in queue.sent)
    assert set(tags.values()) == {1} and len(tags) == len(keys)
    assert {s.message.job_key for s in queue.sent} == keys


def test_a_small_minute_is_one_pair_and_its_second_one_message(
    store: TableStore, settings: Settings
) -> None:
    """Twelve jobs due at the same second, in several shards (each with a cursor, as after
    the first tick): one pair holds every shard with a row, and the twelve go out as one
    queue message, where a pair per shard sent a message per shard."""
    jobs = make_jobs(store, 12, DUE)
    shards = sorted({shard_of(j.key, settings.dispatch_shards) for j in jobs})
    assert len(shards) > 2
    for shard in range(settings.dispatch_shards):  # every shard has a cursor: no rows, no pair
        lease, _ = acquire_shard(store, shard, owner="first", now=T0, duration=LEASE)
        assert lease is not None
        release_shard(store, lease, cursor=T0 - timedelta(minutes=1))
    control = RecordingQueue(settings).ready()

    report = coordinate(store, control, settings, now=T0)

    assert [pair.shards for pair in report.pairs] == [tuple(shards)]
    queue = RecordingQueue(settings).ready()
    [pair] = report.pairs
    result = dispatch_pair(store, queue, settings, pair, owner="w", now=T0)
    assert result.outcome is PairOutcome.DONE and result.again is None
    assert result.report is not None
    assert (result.report.messages_sent, result.report.queue_sends) == (12, 1)
    _sent_once(queue, {j.key for j in jobs})
    # The pair's counts are kept once, on its first shard; the others name it.
    states = [get_shard_state(store, shard) for shard in shards]
    assert [s.number("messages_sent") for s in states] == [12.0] + [0.0] * (len(shards) - 1)
    assert {s.last_pair.get("pairedWith") for s in states[1:]} == {f"{shards[0]:02d}"}
    assert all(s.cursor == result.cursor and s.handled_tick == T0 for s in states)


def test_a_large_minute_is_split_into_pairs_that_dispatch_everything_once(
    store: TableStore, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More rows than a pair takes (the limit made small here): several pairs, none over the
    limit unless it is one shard alone, every shard with rows in exactly one, and each
    occurrence sent once when they are all handled."""
    monkeypatch.setattr(coordinator_module, "PAIR_ROWS", 6)
    jobs = make_jobs(store, 30, DUE)
    rows = Counter(shard_of(j.key, settings.dispatch_shards) for j in jobs)

    report = coordinate(store, RecordingQueue(settings).ready(), settings, now=T0)

    assert len(report.pairs) > 2
    listed = [shard for pair in report.pairs for shard in pair.shards]
    assert sorted(listed) == list(range(settings.dispatch_shards))  # no cursor yet: all
    for pair in report.pairs:
        assert len(pair.shards) == 1 or sum(rows[s] for s in pair.shards) <= 6
    queue = RecordingQueue(settings).ready()
    for pair in report.pairs:
        assert dispatch_pair(store, queue, settings, pair, owner="w", now=T0).outcome is (
            PairOutcome.DONE
        )
    _sent_once(queue, {j.key for j in jobs})


def _every_shard(settings: Settings) -> ControlMessage:
    return ControlMessage(minute_key(T0), tuple(range(settings.dispatch_shards)), T0)


def test_a_shard_another_worker_holds_is_left_out_and_sent_again_alone(
    settings: Settings,
) -> None:
    """A pair of every shard, one of them leased by a worker that died: the runtime handles
    the others and sends a control message for that shard alone, visible when the lease
    ends; handled then, it sends the rest. Nothing twice, nothing lost."""
    runtime = Runtime(settings, clock=lambda: T0)
    runtime.ensure_storage()
    make_collection(runtime.store)
    queue = RecordingQueue(settings).ready()
    runtime.dispatcher = replace(runtime.dispatcher, queue=queue)
    jobs = make_jobs(runtime.store, 16, DUE)
    held = shard_of(jobs[0].key, settings.dispatch_shards)
    acquire_shard(runtime.store, held, owner="dead", now=T0, duration=LEASE)

    result = runtime.dispatch(_every_shard(settings).to_json())

    assert result is not None and result.outcome is PairOutcome.DONE
    assert result.again == ControlMessage(minute_key(T0), (held,), T0)
    assert result.busy_until == T0 + LEASE
    waiting = {j.key for j in jobs if shard_of(j.key, settings.dispatch_shards) == held}
    _sent_once(queue, {j.key for j in jobs} - waiting)
    assert runtime.dispatch_queue.receive(max_messages=32) == []  # not visible before then

    later = T0 + LEASE + timedelta(seconds=1)
    again = dispatch_pair(
        runtime.store, queue, settings, result.again, owner="next", now=later
    )  # the message sent again, taken when it becomes visible
    assert again.outcome is PairOutcome.DONE
    _sent_once(queue, {j.key for j in jobs})


def test_every_shard_held_elsewhere_is_busy_and_every_shard_done_is_a_duplicate(
    store: TableStore, settings: Settings
) -> None:
    jobs = make_jobs(store, 10, DUE)
    pair = _every_shard(settings)
    for shard in pair.shards:
        acquire_shard(store, shard, owner="other", now=T0, duration=LEASE)
    queue = RecordingQueue(settings).ready()

    busy = dispatch_pair(store, queue, settings, pair, owner="w", now=T0)

    assert (busy.outcome, busy.again, busy.busy_until) == (PairOutcome.BUSY, pair, T0 + LEASE)
    assert queue.sent == []
    later = T0 + LEASE + timedelta(seconds=1)
    done = dispatch_pair(store, queue, settings, pair, owner="w", now=later)
    duplicate = dispatch_pair(store, queue, settings, pair, owner="x", now=later)
    assert (done.outcome, duplicate.outcome) == (PairOutcome.DONE, PairOutcome.DUPLICATE)
    assert duplicate.again is None
    _sent_once(queue, {j.key for j in jobs})


def test_a_shard_already_handled_for_the_tick_is_skipped_and_the_rest_run(
    store: TableStore, settings: Settings
) -> None:
    """A coordinator tick run twice with different groups (rows written in between): a
    shard the first pair handled is not handled again by the second."""
    jobs = make_jobs(store, 16, DUE)
    first_shard = shard_of(jobs[0].key, settings.dispatch_shards)
    queue = RecordingQueue(settings).ready()
    alone = ControlMessage(minute_key(T0), (first_shard,), T0)
    assert dispatch_pair(store, queue, settings, alone, owner="a", now=T0).outcome is (
        PairOutcome.DONE
    )
    before = len(queue.sent)

    result = dispatch_pair(store, queue, settings, _every_shard(settings), owner="b", now=T0)

    assert result.outcome is PairOutcome.DONE and result.report is not None
    assert (
        result.report.messages_sent
        == len(queue.sent) - before
        == sum(shard_of(j.key, settings.dispatch_shards) != first_shard for j in jobs)
    )
    _sent_once(queue, {j.key for j in jobs})


def test_the_control_message_wire_form() -> None:
    one = ControlMessage("202603040900", (3,), T0)
    assert json.loads(one.to_json()) == {
        "minute": "202603040900",
        "shard": 3,
        "now": "2026-03-04T09:00:00Z",
    }  # a pair of one shard is the message it always was
    several = ControlMessage("202603040900", (0, 2, 5), T0)
    assert json.loads(several.to_json())["shards"] == [0, 2, 5]
    assert json.loads(several.to_json())["shard"] == 0  # what an older worker handles
    for message in (one, several):
        assert ControlMessage.from_json(message.to_json()) == message
    repeated = (
        '{"minute": "202603040900", "shard": 1, "shards": [1, 1, 4], "now": "2026-03-04T09:00:00Z"}'
    )
    assert ControlMessage.from_json(repeated).shards == (1, 4)


@pytest.mark.parametrize("shards", ["[]", '"3"', "[-1]", "[true]", '["2"]', "[1.5]", "{}"])
def test_a_control_message_with_bad_shards_is_refused(shards: str) -> None:
    body = json.dumps({"minute": "202603040900", "shard": 0, "now": "2026-03-04T09:00:00Z"})
    body = body[:-1] + f', "shards": {shards}}}'
    with pytest.raises(ValidationError) as err:
        ControlMessage.from_json(body)
    assert err.value.target == "controlMessage"
