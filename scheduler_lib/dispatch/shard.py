"""A pair's part of a tick: the rows of its shards' due minutes, dispatched (see `pair`).

Each shard reads only the due-index partitions of its minutes that are due, from
min(its cursor, now - grace period) through one minute ahead, so its cost follows what is
due, not how many jobs exist: one range scan a shard, jobs read in groups of a collection
(`store.find_jobs`), one read per collection those jobs live in. The shards' rows are
handled as one list, so occurrences of one second share a message across them. Jobs are
handled a chunk at a time (`dispatch_chunk`, which batches the due-index writes) by
`dispatch_read_job` (send, advance, move the row) or `dispatch_postpone` (missed by
downtime); parked messages (retries longer than a queue's visibility limit) are sent as
they are.

Re-reading the grace window every tick is what catches rows written after the previous
tick read their minute (the API creating a job due this minute); handled rows are removed,
so that re-read costs only what is left. The cursor (the last minute fully handled) only
matters after downtime, when it lies before the grace window: the shard then reads back to
it and postpones what was missed. A job whose handling fails keeps the cursor before its
minute, so the next tick sees its row again; other jobs are not held up by it.

Jobs are independent, so they are handled by a small thread pool: a shard is mostly
waiting on storage round trips (see bench/dispatch.py for the measured effect).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timedelta

from scheduler_lib.config import Settings
from scheduler_lib.dispatch.chunk import CHUNK, Unit, dispatch_chunk
from scheduler_lib.dispatch.context import Counts, TickContext
from scheduler_lib.dispatch.report import TickReport, minute_start, minutes_between
from scheduler_lib.domain import collection_key, split_job_key
from scheduler_lib.domain.outcomes import Observer, ignore
from scheduler_lib.errors import NotFoundError
from scheduler_lib.execution import ExecutionQueue
from scheduler_lib.store import DueRow, TableStore, due_rows, get_collection, minute_key
from scheduler_lib.timeutil import Clock

#: Threads handling jobs in parallel. Storage round trips dominate, not CPU.
DEFAULT_WORKERS = 8
LOOK_AHEAD = timedelta(minutes=1)


@dataclass
class TickCollections:
    """The collections' states a worker read for one tick, shared by the pairs of that tick
    it handles (the single timer read each collection once per tick; a worker handling
    several shards of a tick still does). A pair of another tick starts afresh."""

    tick: datetime | None = None
    states: dict[str, bool] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def of(self, tick: datetime) -> dict[str, bool]:
        with self.lock:
            if tick != self.tick:
                self.tick, self.states = tick, {}
            return dict(self.states)

    def learn(self, tick: datetime, states: dict[str, bool]) -> None:
        with self.lock:
            if tick == self.tick:
                self.states.update(states)


def window(
    settings: Settings, cursor: datetime | None, *, now: datetime
) -> tuple[datetime, datetime]:
    """The instants whose minutes a shard's pair at `now` reads: from its cursor or the grace
    window, whichever is earlier, through one minute ahead. The coordinator counts a shard's
    rows in them (`coordinator.pairs_with_work`) before it hands the shard a pair."""
    start = now - settings.grace_period
    if cursor is not None and cursor < start:
        start = cursor
    return start, now + LOOK_AHEAD


def run_shards(
    store: TableStore,
    queue: ExecutionQueue,
    settings: Settings,
    cursors: dict[int, datetime | None],
    *,
    now: datetime,
    clock: Clock | None = None,
    workers: int = DEFAULT_WORKERS,
    between_chunks: Callable[[], None] | None = None,
    collections: TickCollections | None = None,
    tick: datetime | None = None,
    observe: Observer = ignore,
) -> TickReport:
    """Dispatch the occurrences of the shards of `cursors`, each due from its cursor (or the
    grace window, whichever is earlier) through one minute after `now`; `between_chunks` runs
    before each chunk (the leases' renewal); `collections` holds what the worker read of the
    collections for `tick` (the instant of the tick the pair belongs to); `observe` takes
    the tick's postponements (`TickContext.observe`). With the entry point's `clock`, each
    message's delay is measured from when it is sent and the report says how long it took;
    without, all happens at `now`. The report's cursor is every shard's next one."""
    windows = {shard: window(settings, cursor, now=now) for shard, cursor in cursors.items()}
    start = min(first for first, _ in windows.values())
    through = max(last for _, last in windows.values())
    ctx = TickContext(
        store, queue, settings, now, minute_key(through), clock=clock, batched=True,
        observe=observe,
    )  # fmt: skip
    rows = [
        row
        for shard, (first, last) in windows.items()
        for row in due_rows(store, start=first, through=last, shard=shard)
    ]
    known = (collections or TickCollections(), tick or now)
    counts, read, failed_minutes = _dispatch_rows(ctx, rows, workers, between_chunks, known)
    next_cursor = minute_start(ctx.through_minute)
    if failed_minutes:
        next_cursor = minute_start(min(failed_minutes)) - timedelta(minutes=1)
    return TickReport(
        now=now,
        first_minute=minute_key(start),
        through_minute=ctx.through_minute,
        minutes_read=minutes_between(minute_key(start), ctx.through_minute),
        rows_read=len(rows),
        collection_entities_read=read,
        failed=len(failed_minutes),
        cursor=next_cursor,
        duration=(clock() - now).total_seconds() if clock is not None else 0.0,
        **asdict(counts),
    )


def _dispatch_rows(
    ctx: TickContext,
    rows: list[DueRow],
    workers: int,
    between_chunks: Callable[[], None] | None,
    known: tuple[TickCollections, datetime],
) -> tuple[Counts, int, list[str]]:
    """Handle the rows: each job's rows as one unit, each parked message as one, soonest
    first, `CHUNK` units at a time (`dispatch_chunk`). Returns the work done, how many
    collections were read, and the minute of each unit that failed (its rows stay for the
    next tick)."""
    by_job: dict[str, list[DueRow]] = {}
    parked: list[DueRow] = []
    for row in rows:
        if row.payload is not None:
            parked.append(row)
        else:
            by_job.setdefault(row.job_key, []).append(row)
    cache, tick = known
    states = cache.of(tick)
    wanted = {collection_key(*split_job_key(key)[:3]) for key in by_job}
    collections = sorted(wanted - set(states))
    units: list[Unit] = list(by_job.items())
    units += [(None, [row]) for row in parked]
    # Earliest first: in a long tick, what is due soonest must not wait behind the rest.
    units.sort(key=lambda unit: min(r.due for r in unit[1]))

    counts, failed_minutes = Counts(), list[str]()
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        run = pool.map if workers > 1 else map
        enabled = run(lambda key: _collection_enabled(ctx, key), collections)
        states.update(zip(collections, enabled, strict=True))
        cache.learn(tick, states)
        ctx = replace(ctx, collections_enabled=states)
        for start in range(0, len(units), CHUNK):
            if between_chunks is not None and start:
                between_chunks()
            chunk_counts, chunk_failed = dispatch_chunk(
                ctx, units[start : start + CHUNK], pool if workers > 1 else None
            )
            counts.add(chunk_counts)
            failed_minutes += chunk_failed
    return counts, len(collections), failed_minutes


def _collection_enabled(ctx: TickContext, key: str) -> bool:
    """A collection read once per tick; a missing one is not enabled (its rows are stale)."""
    sub, rg, name = key.split("|", 2)
    try:
        return get_collection(ctx.store, sub, rg, name).enabled
    except NotFoundError:
        return False
