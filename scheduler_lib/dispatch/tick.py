"""The dispatcher's entry points: the coordinator's tick, one pair, or a whole tick at once.

In Azure the timer function runs the coordinator (`coordinator.coordinate`: one control
message per due pair of a minute and its shards) and the dispatch function handles each message
(`pair.dispatch_pair`), on as many instances as the Functions host gives it. `run_tick` does
a whole tick in the calling process through the same per-pair code, every shard in one pair:
what tests and benchmarks drive, and what a host without a dispatch queue would run.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime

from scheduler_lib.config import Settings
from scheduler_lib.dispatch.control import ControlMessage
from scheduler_lib.dispatch.coordinator import CoordinatorReport, coordinate, pairs_due
from scheduler_lib.dispatch.pair import PairResult, dispatch_pair
from scheduler_lib.dispatch.report import TickReport, combine, minute_start
from scheduler_lib.dispatch.shard import DEFAULT_WORKERS, LOOK_AHEAD, TickCollections
from scheduler_lib.domain.outcomes import Observer, ignore
from scheduler_lib.execution import ExecutionQueue
from scheduler_lib.store import (
    DispatcherState,
    TableStore,
    migrate_unsharded,
    minute_key,
    save_dispatcher_state,
)
from scheduler_lib.timeutil import Clock

__all__ = ["DEFAULT_WORKERS", "LOOK_AHEAD", "Dispatcher", "TickReport", "run_tick"]


@dataclass(frozen=True)
class Dispatcher:
    """The dispatcher's work, built once per worker (`runtime.Runtime`) with the storage,
    the queue and the settings every tick uses; the entry point hands each call its `now`."""

    store: TableStore
    queue: ExecutionQueue
    settings: Settings
    clock: Clock | None = None
    workers: int = DEFAULT_WORKERS
    #: What this worker read of the collections for the tick it handles pairs of.
    collections: TickCollections = field(default_factory=TickCollections)
    #: Takes what the pairs decide about occurrences (the runtime's metrics).
    observe: Observer = ignore

    def tick(self, *, now: datetime) -> TickReport:
        """A whole tick at `now` in this process (see `run_tick`)."""
        return run_tick(
            self.store, self.queue, self.settings, now=now, clock=self.clock,
            workers=self.workers, observe=self.observe,
        )  # fmt: skip

    def coordinate(self, control_queue: ExecutionQueue, *, now: datetime) -> CoordinatorReport:
        """The timer function's part: send the due pairs to `control_queue`."""
        return coordinate(self.store, control_queue, self.settings, now=now)

    def pair(self, message: str, *, now: datetime, owner: str = "") -> PairResult:
        """The dispatch function's part: one control message's pair."""
        return dispatch_pair(
            self.store, self.queue, self.settings, ControlMessage.from_json(message),
            owner=owner or uuid.uuid4().hex, now=now, clock=self.clock, workers=self.workers,
            collections=self.collections, observe=self.observe,
        )  # fmt: skip


def run_tick(
    store: TableStore,
    queue: ExecutionQueue,
    settings: Settings,
    *,
    now: datetime,
    clock: Clock | None = None,
    workers: int = DEFAULT_WORKERS,
    observe: Observer = ignore,
) -> TickReport:
    """Dispatch every occurrence due from the cursor through one minute after `now`: the
    coordinator's work and the pairs it would hand out, here, as one pair of every shard. A
    shard another worker holds is left to it."""
    now = now.astimezone(UTC)
    migrate_unsharded(store)
    owner, collections = uuid.uuid4().hex, TickCollections()

    def handle(pair: ControlMessage) -> PairResult:
        return dispatch_pair(
            store, queue, settings, pair,
            owner=owner, now=now, clock=clock, workers=workers, collections=collections,
            observe=observe,
        )  # fmt: skip

    results = [handle(pair) for pair in pairs_due(settings, now)]
    report = combine_results(now, results, clock)
    save_dispatcher_state(store, DispatcherState(report.cursor, now, report.summary()))
    return report


def combine_results(now: datetime, results: list[PairResult], clock: Clock | None) -> TickReport:
    """One report for a tick's pairs; its cursor is the lowest of the shards' cursors."""
    cursors = [r.cursor for r in results if r.cursor is not None]
    cursor = min(cursors) if cursors else minute_start(minute_key(now + LOOK_AHEAD))
    duration = (clock() - now).total_seconds() if clock is not None else 0.0
    return combine(now, [r.report for r in results if r.report is not None], cursor, duration)
