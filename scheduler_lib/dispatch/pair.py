"""One pair (a tick's minute and one or more shards), handled under its shards' leases: what
the dispatch function does with one control message.

1. Take each shard's lease, in the message's order (ETag-conditional, `LEASE` long). A shard
   another worker holds is left out, and the caller sends a message for the shards left out
   again for when their leases end (`PairResult.again`: the holder may have died; its lease
   then expires and that message takes the shard over). None taken: the pair is `BUSY`.
2. A shard whose last pair handled cleanly was for this tick or a later one is given back: a
   duplicate control message, or a coordinator tick run twice. None left: `DUPLICATE`.
3. Otherwise dispatch the shards left (`shard.run_shards`, each from its cursor, their rows
   as one, so occurrences of one second share a message across them), renewing every lease
   before each chunk; a lease lost meanwhile stops the pair at the next chunk.
4. Give each lease back with the pair's new cursor and, if no job failed, the tick's instant
   as handled (a pair with failures may run again at once: its rows are still there; every
   shard of it keeps its cursor before the failed minute).

A worker killed mid-pair writes nothing more: its leases expire, the shards' cursors still
lie before what it had not finished, and the next worker re-reads those rows. Whatever it
had sent is sent again with the same tag, and the executor runs a tag once; a job it had
advanced is found stale and dropped. A Python-level crash (an exception that is not an
`Exception`) gives the leases back at once, without the cursor, for the same effect sooner.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import Enum

from scheduler_lib.config import Settings
from scheduler_lib.dispatch.control import ControlMessage
from scheduler_lib.dispatch.report import TickReport
from scheduler_lib.dispatch.shard import DEFAULT_WORKERS, TickCollections, run_shards
from scheduler_lib.domain.outcomes import Observer, ignore
from scheduler_lib.execution import ExecutionQueue
from scheduler_lib.store import (
    LeaseLostError,
    ShardState,
    TableStore,
    TickSummary,
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
    """What handling one control message did. `cursor`: the lowest of its shards' cursors
    afterwards; `again`: the part of the pair whose shards other workers held, to send again
    for `busy_until`, when the last of those leases ends."""

    outcome: PairOutcome
    cursor: datetime | None
    report: TickReport | None = None
    busy_until: datetime | None = None
    again: ControlMessage | None = None


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
    held, busy, skipped = _take(store, pair, owner=owner, now=now)
    again = replace(pair, shards=tuple(s.shard for s in busy)) if busy else None
    busy_until = max((s.lease_until or now for s in busy), default=None)
    others = [s.cursor for s in busy + skipped]
    if not held:
        outcome = PairOutcome.BUSY if busy else PairOutcome.DUPLICATE
        return PairResult(outcome, _lowest(others), None, busy_until, again)
    fallback = None
    if any(lease.cursor is None for lease in held):
        fallback = get_dispatcher_state(store).cursor  # a shard's first pair reads from it
    cursors = {lease.shard: lease.cursor or fallback for lease in held}

    def renew() -> None:
        at = clock() if clock is not None else now
        for index, lease in enumerate(held):  # one by one: a lease lost leaves the rest current
            held[index] = renew_shard(store, lease, now=at, duration=LEASE)

    try:
        report = run_shards(
            store, queue, settings, cursors,
            now=now, clock=clock, workers=workers, between_chunks=renew,
            collections=collections, tick=pair.now, observe=observe,
        )  # fmt: skip
    except BaseException:
        _give_back(store, held)
        raise
    _release(store, held, pair, report)
    return PairResult(
        PairOutcome.DONE, _lowest([report.cursor, *others]), report, busy_until, again
    )


def _take(
    store: TableStore, pair: ControlMessage, *, owner: str, now: datetime
) -> tuple[list[ShardState], list[ShardState], list[ShardState]]:
    """Each shard's lease, in order: (the leases taken, the states of the shards another
    worker holds, the shards already handled for the pair's tick, whose leases were given
    back). Should taking one fail, those already taken are given back."""
    held: list[ShardState] = []
    busy: list[ShardState] = []
    skipped: list[ShardState] = []
    try:
        for shard in pair.shards:
            lease, seen = acquire_shard(store, shard, owner=owner, now=now, duration=LEASE)
            if lease is None:
                busy.append(seen)
            elif lease.handled_tick is not None and lease.handled_tick >= pair.now:
                _give_back(store, [lease])
                skipped.append(lease)
            else:
                held.append(lease)
    except BaseException:
        _give_back(store, held)
        raise
    return held, busy, skipped


def _release(
    store: TableStore, held: list[ShardState], pair: ControlMessage, report: TickReport
) -> None:
    """Give the leases back with the pair's cursor and, if nothing failed, its tick as
    handled. The first shard keeps the pair's summary; the others its instants without the
    counts, so that the coordinator's sum over shards counts a pair once."""
    summary = report.summary()
    times = {**summary.times, "pairedWith": f"{held[0].shard:02d}"}
    shared = TickSummary({}, summary.duration, times)
    for index, lease in enumerate(held):
        try:
            release_shard(
                store,
                lease,
                cursor=report.cursor,
                handled_tick=pair.now if not report.failed else None,
                last_pair=(summary if index == 0 else shared).to_json(),
            )
        except LeaseLostError:
            log.warning("shard %d was taken over before its pair finished", lease.shard)


def _lowest(cursors: Iterable[datetime | None]) -> datetime | None:
    """The lowest of the cursors there are (None when there is none)."""
    return min((cursor for cursor in cursors if cursor is not None), default=None)


def _give_back(store: TableStore, leases: list[ShardState]) -> None:
    """Release the leases, changing nothing else (best effort: they expire anyway)."""
    for lease in leases:
        try:
            release_shard(store, lease)
        except Exception:
            log.warning("could not give shard %d's lease back", lease.shard, exc_info=True)
