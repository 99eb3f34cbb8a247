"""The timer tick, fanned out: decide which (minute, shard) pairs are due and send one
control message per pair to the dispatch queue; the dispatch function handles each (`pair`).

Every shard has a pair every tick: a shard reads from its own cursor, so a pair after
downtime also catches what the minutes missed, and an empty shard costs one empty range
scan. The coordinator itself reads no due row: two range queries that find rows still in the
format before sharding (`migrate_unsharded`, nothing once moved) and one query of the shards'
states, for the health endpoint's summary (the pairs of the previous tick, the lowest cursor).
A tick run twice sends the same messages twice: the second of each is a duplicate.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from scheduler_lib.config import Settings
from scheduler_lib.dispatch.control import ControlMessage
from scheduler_lib.dispatch.report import SUMMED
from scheduler_lib.execution import ExecutionQueue
from scheduler_lib.store import (
    DispatcherState,
    TableStore,
    TickSummary,
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


def pairs_due(settings: Settings, now: datetime) -> list[ControlMessage]:
    """The pairs a tick at `now` hands out: every shard, at the tick's minute."""
    minute = minute_key(now)
    return [ControlMessage(minute, shard, now) for shard in range(settings.dispatch_shards)]


def coordinate(
    store: TableStore, control_queue: ExecutionQueue, settings: Settings, *, now: datetime
) -> CoordinatorReport:
    """Move unsharded rows, send the due pairs, store what the previous pairs did."""
    now = now.astimezone(UTC)
    migrated = migrate_unsharded(store)
    if migrated:
        log.warning("moved %d due-index rows into their shards", migrated)
    pairs = pairs_due(settings, now)
    for pair in pairs:
        control_queue.send_body(pair.to_json())
    save_dispatcher_state(store, _state(store, settings, now, len(pairs)))
    return CoordinatorReport(now, pairs, migrated)


def _state(store: TableStore, settings: Settings, now: datetime, sent: int) -> DispatcherState:
    """The dispatcher's state for the health endpoint: the lowest shard cursor, and the
    shards' last pairs added up."""
    states = [s for s in shard_states(store) if s.shard < settings.dispatch_shards]
    cursors = [s.cursor for s in states if s.cursor is not None]
    counts = {name: sum(int(s.number(name)) for s in states) for name in SUMMED}
    counts["pairs_sent"] = sent
    duration = max((s.number("duration") for s in states), default=0.0)
    summary = TickSummary(counts, duration, {"now": iso_z(now)})
    cursor: datetime | None
    if len(cursors) == settings.dispatch_shards:
        cursor = min(cursors)
    else:  # a shard without a cursor of its own reads from this one (`pair`): keep it
        cursor = get_dispatcher_state(store).cursor
    return DispatcherState(cursor, now, summary)
