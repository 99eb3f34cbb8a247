"""What a scrape of `GET /api/metrics` reports, read from storage when it is asked, so any
instance answers for all of them (on Azure a scrape reaches one instance at random).

Counters: the sum of every instance's row and the retired row (`store/metrics_rows.py`),
one partition query. Gauges: read now, from what the health endpoint reads (the
dispatcher's last tick, the last consistency check's overdue jobs; `health`) and from the
queues' approximate message counts.

Rows of instances that stopped flushing are not dropped from the sum, which would make a
counter fall (Prometheus takes a fall for a restart and counts the whole value again):
the tick's upkeep folds them into the retired row (`fold_stale`), and a scrape leaves out
any row the retired row already holds, so between the two writes of a fold nothing counts
twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from scheduler_lib.execution import ExecutionQueue
from scheduler_lib.health import overdue_jobs, seconds_since_last_tick
from scheduler_lib.metrics.snapshot import Snapshot
from scheduler_lib.store import (
    RETIRED,
    MetricsRow,
    TableStore,
    fold_row,
    get_dispatcher_state,
    get_repair_state,
    metrics_rows,
)

#: An instance row not flushed for this long belongs to a stopped instance: it is folded
#: into the retired row (a live instance that records flushes every minute).
STALE = timedelta(minutes=10)
#: The queues whose depth is reported, by their `queue` label.
EXECUTION, DISPATCH, POISON = "execution", "dispatch", "poison"


@dataclass(frozen=True)
class Gauges:
    queue_messages: dict[str, int]
    seconds_since_last_tick: float | None
    overdue_jobs: int


@dataclass(frozen=True)
class Scrape:
    counters: Snapshot  # every instance's counters added up
    instances: int  # rows of instances flushed within STALE
    gauges: Gauges


def summed(rows: list[MetricsRow], *, now: datetime) -> tuple[Snapshot, int]:
    """The counters of `rows` added up (a row the retired one has folded left out), and
    how many of them are live instances."""
    retired = next((row for row in rows if row.row_key == RETIRED), None)
    folded = set(retired.folded) if retired is not None else set()
    total, live = Snapshot(), 0
    for row in rows:
        if row.row_key in folded:
            continue
        total = total.plus(Snapshot.from_json(row.snapshot))
        fresh = row.flushed_at is not None and now - row.flushed_at <= STALE
        live += row.is_instance and fresh
    return total, live


def read_gauges(
    store: TableStore, queues: Mapping[str, ExecutionQueue], *, now: datetime
) -> Gauges:
    """The gauges as of `now`: queue depths (the execution queue's poison queue under
    `POISON`), the dispatcher's last tick, the overdue jobs."""
    depths = {name: queue.ready().depth() for name, queue in queues.items()}
    if EXECUTION in queues:
        depths[POISON] = queues[EXECUTION].depth(poisoned=True)
    age = seconds_since_last_tick(get_dispatcher_state(store), now=now)
    return Gauges(depths, age, overdue_jobs(get_repair_state(store)))


def scrape(store: TableStore, queues: Mapping[str, ExecutionQueue], *, now: datetime) -> Scrape:
    rows, _ = metrics_rows(store.ready())
    counters, live = summed(rows, now=now)
    return Scrape(counters, live, read_gauges(store, queues, now=now))


def fold_stale(store: TableStore, *, now: datetime) -> int:
    """Fold the rows of instances that stopped flushing into the retired row, and delete
    rows it already holds (a fold interrupted between its two writes); how many."""
    rows, _ = metrics_rows(store)
    retired = next((row for row in rows if row.row_key == RETIRED), None)
    folded = set(retired.folded) if retired is not None else set()
    stale = [
        row
        for row in rows
        if row.is_instance
        and (row.row_key in folded or row.flushed_at is None or now - row.flushed_at > STALE)
    ]
    for row in stale:
        fold_row(store, row, add_rows)
    return len(stale)


def add_rows(retired: str, row: str) -> str:
    """The snapshot text of two rows added up (how a fold adds a row to the retired one)."""
    return Snapshot.from_json(retired).plus(Snapshot.from_json(row)).to_json()
