"""The dispatcher: one tick (the timer function calls `run_tick` every minute).

A tick reads only the due-index partitions of the minutes that are due, from
min(cursor, now - grace period) through one minute ahead, so its cost follows what is due,
not how many jobs exist: one range scan, one point read per due job, one read per
collection those jobs live in. Jobs are handled a chunk at a time (`dispatch_chunk`, which
batches the due-index writes) by `dispatch_read_job` (send, advance, move the row) or
`dispatch_postpone` (missed by downtime); parked messages (retries longer than a queue's
visibility limit) are sent as they are.

Re-reading the grace window on every tick is what catches rows written after the previous
tick read their minute (the API creating a job due this minute); handled rows are removed,
so that re-read costs only what is left. The cursor (the last minute fully handled) only
matters after downtime, when it lies before the grace window: the tick then reads back to
it and postpones what was missed. A job whose handling fails keeps the cursor before its
minute, so the next tick sees its row again; other jobs are not held up by it.

Jobs are independent, so they are handled by a small thread pool: a tick is mostly waiting
on storage round trips (see bench/dispatch.py for the measured effect).
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime, timedelta

from scheduler_lib.config import Settings
from scheduler_lib.dispatch.chunk import CHUNK, Unit, dispatch_chunk
from scheduler_lib.dispatch.context import Counts, TickContext
from scheduler_lib.domain import collection_key, split_job_key
from scheduler_lib.errors import NotFoundError
from scheduler_lib.execution import ExecutionQueue
from scheduler_lib.store import (
    MINUTE_FORMAT,
    DispatcherState,
    DueRow,
    TableStore,
    due_rows,
    get_collection,
    get_dispatcher_state,
    minute_key,
    save_dispatcher_state,
)
from scheduler_lib.timeutil import Clock, iso_z

logger = logging.getLogger(__name__)

#: Threads handling jobs in parallel. Storage round trips dominate, not CPU.
DEFAULT_WORKERS = 8
LOOK_AHEAD = timedelta(minutes=1)


@dataclass(frozen=True)
class TickReport:
    """What one tick read and did. `entities_read` is the tick's storage cost."""

    now: datetime
    first_minute: str
    through_minute: str
    minutes_read: int
    rows_read: int
    job_entities_read: int
    collection_entities_read: int
    history_entities_read: int
    messages_sent: int
    parked_sent: int
    postponed: int
    stale_dropped: int
    completed: int
    failed: int
    cursor: datetime
    duration: float  # seconds

    @property
    def entities_read(self) -> int:
        return (
            self.rows_read
            + self.job_entities_read
            + self.collection_entities_read
            + self.history_entities_read
        )

    def summary(self) -> dict[str, object]:
        """JSON-ready form, stored as the last tick for the health endpoint."""
        body: dict[str, object] = asdict(self)
        body["now"], body["cursor"] = iso_z(self.now), iso_z(self.cursor)
        body["entities_read"] = self.entities_read
        return body


@dataclass(frozen=True)
class Dispatcher:
    """The timer trigger's work, built once per worker (`runtime.Runtime`) with the storage,
    the queue and the settings every tick uses; the entry point hands each tick its `now`."""

    store: TableStore
    queue: ExecutionQueue
    settings: Settings
    clock: Clock | None = None
    workers: int = DEFAULT_WORKERS

    def tick(self, *, now: datetime) -> TickReport:
        """One tick at `now` (see `run_tick`)."""
        return run_tick(
            self.store, self.queue, self.settings, now=now, clock=self.clock, workers=self.workers
        )


def run_tick(
    store: TableStore,
    queue: ExecutionQueue,
    settings: Settings,
    *,
    now: datetime,
    clock: Clock | None = None,
    workers: int = DEFAULT_WORKERS,
) -> TickReport:
    """Dispatch every occurrence due from the cursor through one minute after `now`. With
    the entry point's `clock`, each message's delay is measured from when it is sent and the
    report says how long the tick took; without, the whole tick happens at `now`."""
    now = now.astimezone(UTC)
    cursor = get_dispatcher_state(store).cursor
    start = now - settings.grace_period
    if cursor is not None and cursor < start:
        start = cursor
    through = now + LOOK_AHEAD
    ctx = TickContext(
        store, queue, settings, now, minute_key(through), clock=clock, batched=True
    )
    rows = list(due_rows(store, start=start, through=through))

    counts, collections, failed_minutes = _dispatch_rows(ctx, rows, workers)

    next_cursor = _minute_start(ctx.through_minute)
    if failed_minutes:
        next_cursor = _minute_start(min(failed_minutes)) - timedelta(minutes=1)
    report = TickReport(
        now=now,
        first_minute=minute_key(start),
        through_minute=ctx.through_minute,
        minutes_read=_minutes_between(minute_key(start), ctx.through_minute),
        rows_read=len(rows),
        collection_entities_read=collections,
        failed=len(failed_minutes),
        cursor=next_cursor,
        duration=(clock() - now).total_seconds() if clock is not None else 0.0,
        **asdict(counts),
    )
    save_dispatcher_state(store, DispatcherState(next_cursor, now, report.summary()))
    return report


def _dispatch_rows(
    ctx: TickContext, rows: list[DueRow], workers: int
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
    collections = sorted({collection_key(*split_job_key(key)[:3]) for key in by_job})
    units: list[Unit] = list(by_job.items())
    units += [(None, [row]) for row in parked]
    # Earliest first: in a long tick, what is due soonest must not wait behind the rest.
    units.sort(key=lambda unit: min(r.due for r in unit[1]))

    counts, failed_minutes = Counts(), list[str]()
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        run = pool.map if workers > 1 else map
        enabled = run(lambda key: _collection_enabled(ctx, key), collections)
        ctx = replace(ctx, collections_enabled=dict(zip(collections, enabled, strict=True)))
        for start in range(0, len(units), CHUNK):
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


def _minute_start(minute: str) -> datetime:
    return datetime.strptime(minute, MINUTE_FORMAT).replace(tzinfo=UTC)


def _minutes_between(first: str, last: str) -> int:
    """How many minute partitions the range from `first` through `last` spans."""
    return int((_minute_start(last) - _minute_start(first)) / timedelta(minutes=1)) + 1
