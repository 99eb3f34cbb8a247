"""One (minute, shard) pair, handled under the shard's lease: what the dispatch function does
with one control message.

1. Take the shard's lease (ETag-conditional, `LEASE` long). Another worker holds it: the
   pair is `BUSY` and the caller sends its message again for when the lease ends (the holder
   may have died; its lease then expires and this pair takes the shard over).
2. The shard's last pair handled cleanly was for this tick or a later one: a duplicate
   control message, or a coordinator tick run twice. Nothing to do (`DUPLICATE`).
3. Otherwise dispatch the shard (`shard.run_shard`) from its cursor, renewing the lease
   before each chunk; a lease lost meanwhile stops the pair at the next chunk.
4. Give the lease back with the shard's new cursor and, if no job failed, the tick's instant
   as handled (a pair with failures may run again at once: its rows are still there).

A worker killed mid-pair writes nothing more: its lease expires, the shard's cursor still
lies before what it had not finished, and the next worker re-reads those rows. Whatever it
had sent is sent again with the same tag, and the executor runs a tag once; a job it had
advanced is found stale and dropped. A Python-level crash (an exception that is not an
`Exception`) gives the lease back at once, without the cursor, for the same effect sooner.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum

from scheduler_lib.config import Settings
from scheduler_lib.dispatch.control import ControlMessage
from scheduler_lib.dispatch.report import TickReport
from scheduler_lib.dispatch.shard import DEFAULT_WORKERS, TickCollections, run_shard
from scheduler_lib.domain.outcomes import Observer, ignore
from scheduler_lib.execution import ExecutionQueue
from scheduler_lib.store import (
    LeaseLostError,
    ShardState,
    TableStore,
    acquire_shard,
    get_dispatcher_state,
    release_shard,
    renew_shard,
)
from scheduler_lib.timeutil import Clock

log = logging.getLogger("scheduler_lib.dispatch.pair")

#: How long a lease lasts without renewal: a chunk's work (100 jobs) must fit in it with a
#: wide margin; a dead worker's shard waits at most this long.
LEASE = timedelta(seconds=60)


class PairOutcome(Enum):
    DONE = "Done"
    DUPLICATE = "Duplicate"
    BUSY = "Busy"


@dataclass(frozen=True)
class PairResult:
    """What handling one control message did. `cursor`: the shard's cursor afterwards;
    `busy_until`: when the lease another worker holds ends."""

    outcome: PairOutcome
    cursor: datetime | None
    report: TickReport | None = None
    busy_until: datetime | None = None


def dispatch_pair(
    store: TableStore,
    queue: ExecutionQueue,
    settings: Settings,
    pair: ControlMessage,
    *,
    owner: str,
    now: datetime,
    clock: Clock | None = None,
    workers: int = DEFAULT_WORKERS,
    collections: TickCollections | None = None,
    observe: Observer = ignore,
) -> PairResult:
    """Handle `pair` at `now` as `owner` (a unique id per call); see the module docstring.
    `collections`: the states of collections this worker already read for the pair's tick;
    `observe`: takes the pair's postponements (`TickContext.observe`)."""
    lease, seen = acquire_shard(store, pair.shard, owner=owner, now=now, duration=LEASE)
    if lease is None:
        return PairResult(PairOutcome.BUSY, seen.cursor, busy_until=seen.lease_until or now)
    if lease.handled_tick is not None and lease.handled_tick >= pair.now:
        _give_back(store, lease)
        return PairResult(PairOutcome.DUPLICATE, lease.cursor)
    cursor = lease.cursor if lease.cursor is not None else get_dispatcher_state(store).cursor
    held = [lease]

    def renew() -> None:
        held[0] = renew_shard(
            store, held[0], now=clock() if clock is not None else now, duration=LEASE
        )

    try:
        report = run_shard(
            store, queue, settings, pair.shard, cursor,
            now=now, clock=clock, workers=workers, between_chunks=renew,
            collections=collections, tick=pair.now, observe=observe,
        )  # fmt: skip
    except BaseException:
        if held[0].owner == owner:
            _give_back(store, held[0])
        raise
    try:
        release_shard(
            store,
            held[0],
            cursor=report.cursor,
            handled_tick=pair.now if not report.failed else None,
            last_pair=report.summary().to_json(),
        )
    except LeaseLostError:
        log.warning("shard %d was taken over before its pair finished", pair.shard)
    return PairResult(PairOutcome.DONE, report.cursor, report)


def _give_back(store: TableStore, lease: ShardState) -> None:
    """Release the lease, changing nothing else (best effort: it expires anyway)."""
    try:
        release_shard(store, lease)
    except Exception:
        log.warning("could not give shard %d's lease back", lease.shard, exc_info=True)
