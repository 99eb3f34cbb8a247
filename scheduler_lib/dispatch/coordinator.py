"""The timer tick, fanned out: decide which shards have work, group them into pairs and send
one control message per pair to the dispatch queue; the dispatch function handles each
(`pair`).

A shard has work when it has a row in the minutes its pair would read (`shard.window`: from
its cursor or the grace window, whichever is earlier, through the look-ahead minute), or
when it has no cursor of its own yet (its first pair reads from the dispatcher's). The
coordinator counts each shard's rows there with one range scan for the keys (`count_rows`,
up to `PAIR_ROWS`), the shards in parallel: an idle deployment spends the timer's execution
and nothing else a minute (no dispatch invocation, no control message, no lease taken and
given back). Skipping a shard loses nothing, because a pair would have read exactly those
minutes and found nothing:
- a row written after the check into a minute it covered is in the next tick's window (the
  grace window, or back to the skipped shard's cursor, which stayed where it was), as it
  is for a pair that read before the row was written; the API dispatches at once a job it
  makes due before the next tick (`now.dispatch_if_due`), so that row costs no lateness;
- a job whose dispatch failed keeps its row and its shard's cursor before the row's minute,
  so its shard gets a pair every tick until it succeeds; a parked message and a row the
  consistency check re-indexed are rows like any other; after downtime the window reaches
  back to the cursor, so what was missed is found and postponed as before.
If counting fails, the shard gets a pair of its own.

Shards with work are grouped, in order, into pairs of at most `PAIR_ROWS` rows between them
(`group_shards`; a shard with more is a pair alone). Occurrences due in the same second share
an execution message only within one pair (`batch`), so a minute of a few hundred
occurrences spread over eight shards would otherwise go out as a message, an execution and
four queue operations each; grouped, it is one pair and its seconds are batched as with one
shard, while a large minute still gets a pair per shard, on as many instances.

The coordinator's other reads: two range queries that find rows still in the format before
sharding (`migrate_unsharded`, nothing once moved) and one query of the shards' states
(their cursors, and for the health endpoint's summary the pairs since the previous tick). A
tick run twice sends the same messages twice: the second of each is a duplicate.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from scheduler_lib.config import Settings
from scheduler_lib.dispatch.control import ControlMessage
from scheduler_lib.dispatch.report import SUMMED, minute_start
from scheduler_lib.dispatch.shard import DEFAULT_WORKERS, LOOK_AHEAD, window
from scheduler_lib.execution import ExecutionQueue
from scheduler_lib.store import (
    DispatcherState,
    ShardState,
    TableStore,
    TickSummary,
    count_rows,
    get_dispatcher_state,
    migrate_unsharded,
    minute_key,
    save_dispatcher_state,
    shard_states,
)
from scheduler_lib.timeutil import iso_z

log = logging.getLogger("scheduler_lib.dispatch.coordinator")


@dataclass(frozen=True)
class CoordinatorReport:
    now: datetime
    pairs: list[ControlMessage]
    migrated: int  # due-index rows moved into their shard this tick


#: How often the timer ticks: a shard's last pair older than this was not the last tick's.
TICK = timedelta(minutes=1)


#: The most rows the coordinator puts in one pair of several shards: a dispatch worker
#: reads, sends and advances 2,000 occurrences in ~11 s of one core (5.5 ms each, as
#: docs/capacity.md measured it before the ninth step's savings), well inside the look-ahead
#: minute; a minute with more is handed out in more pairs, up to one per shard.
PAIR_ROWS = 2_000


def pairs_due(settings: Settings, now: datetime) -> list[ControlMessage]:
    """One pair of every shard at the tick's minute (`run_tick`, a whole tick in one
    process: one worker, so nothing is gained by splitting it)."""
    return [ControlMessage(minute_key(now), tuple(range(settings.dispatch_shards)), now)]


def group_shards(weights: list[tuple[int, int]], limit: int) -> list[list[int]]:
    """(shard, rows) in shard order, grouped in that order into runs whose rows add up to at
    most `limit` (a shard with more is a run alone)."""
    groups: list[list[int]] = []
    load = 0
    for shard, rows in weights:
        if not groups or load + rows > limit:
            groups.append([])
            load = 0
        groups[-1].append(shard)
        load += rows
    return groups


def pairs_with_work(
    store: TableStore, settings: Settings, states: list[ShardState], *, now: datetime
) -> list[ControlMessage]:
    """The pairs a tick at `now` hands out: the shards with a row in their window, or
    without a cursor yet, grouped by their rows (see the module docstring)."""
    cursors = {state.shard: state.cursor for state in states}

    def rows(shard: int) -> int | None:
        """The shard's rows in its window (up to `PAIR_ROWS`); None: it needs no pair."""
        cursor = cursors.get(shard)
        start, through = window(settings, cursor, now=now)
        try:
            count = count_rows(store, start=start, through=through, shard=shard, up_to=PAIR_ROWS)
        except Exception:
            log.warning("could not count shard %d's rows; it gets a pair", shard, exc_info=True)
            return PAIR_ROWS
        return None if count == 0 and cursor is not None else count

    shards = range(settings.dispatch_shards)
    with ThreadPoolExecutor(max_workers=min(len(shards), DEFAULT_WORKERS)) as pool:
        counted = list(pool.map(rows, shards))
    weights = [(shard, n) for shard, n in zip(shards, counted, strict=True) if n is not None]
    minute = minute_key(now)
    groups = group_shards(weights, PAIR_ROWS)
    return [ControlMessage(minute, tuple(group), now) for group in groups]


def coordinate(
    store: TableStore, control_queue: ExecutionQueue, settings: Settings, *, now: datetime
) -> CoordinatorReport:
    """Move unsharded rows, send the pairs of the shards with work, store what the
    previous pairs did."""
    now = now.astimezone(UTC)
    migrated = migrate_unsharded(store)
    if migrated:
        log.warning("moved %d due-index rows into their shards", migrated)
    states = [s for s in shard_states(store) if s.shard < settings.dispatch_shards]
    pairs = pairs_with_work(store, settings, states, now=now)
    for pair in pairs:
        control_queue.send_body(pair.to_json())
    save_dispatcher_state(store, _state(store, settings, states, now, pairs))
    return CoordinatorReport(now, pairs, migrated)


def _state(
    store: TableStore,
    settings: Settings,
    states: list[ShardState],
    now: datetime,
    pairs: list[ControlMessage],
) -> DispatcherState:
    """The dispatcher's state for the health endpoint: the lowest shard cursor (a shard
    skipped now has nothing through the look-ahead minute), and the pairs handled since
    the previous tick added up."""
    recent = [s for s in states if _handled_since(s, now - TICK)]
    counts = {name: sum(int(s.number(name)) for s in recent) for name in SUMMED}
    counts["pairs_sent"] = len(pairs)
    duration = max((s.number("duration") for s in recent), default=0.0)
    summary = TickSummary(counts, duration, {"now": iso_z(now)})
    sent = {shard for pair in pairs for shard in pair.shards}
    through = minute_start(minute_key(now + LOOK_AHEAD))
    cursors = [s.cursor if s.shard in sent else through for s in states if s.cursor is not None]
    cursor: datetime | None
    if len(cursors) == settings.dispatch_shards:
        cursor = min(cursors)
    else:  # a shard without a cursor of its own reads from this one (`pair`): keep it
        cursor = get_dispatcher_state(store).cursor
    return DispatcherState(cursor, now, summary)


def _handled_since(state: ShardState, since: datetime) -> bool:
    """Whether the shard's last pair ran at `since` or later (its summary's `now`)."""
    ran = state.last_pair.get("now")
    return isinstance(ran, str) and datetime.fromisoformat(ran) >= since
