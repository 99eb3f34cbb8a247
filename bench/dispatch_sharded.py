"""Benchmark of the fanned-out dispatcher against Azurite: throughput and where the time goes.

    .venv/bin/python bench/dispatch_sharded.py [--due 1000,5000,10000] [--workers 1,2,4]
                                               [--reps 1] [--shards 8]

For each count of occurrences due in one minute, in the same run:

- today's single-timer path: one process runs a whole tick (`run_tick`) over a due index of
  one shard with the thread pool of 8, as the one timer function did (plus the shard lease's
  three round trips, which the old tick did not make);
- the fanned-out path with W dispatch workers: the coordinator sends one control message per
  (minute, shard) pair, and W worker processes (each one Functions instance, each with the
  same thread pool) take them off the dispatch queue and dispatch their shard under its lease.

Jobs (hourly HTTP jobs in 50 collections) are bulk-inserted, due over the minute at 30 s after
the simulated tick. Measured: occurrences sent per second (sent / tick-to-last-send) and
tick-to-last-send (from the start of the tick to the last execution message sent); CPU
seconds of the Azurite processes and of ours over that window; storage round trips (HTTP
requests our processes made) per occurrence. Each run gets a fresh Azurite for its queues:
Azurite scans one collection holding every queue's messages on each queue operation, a cost
Azure Storage does not have, which would otherwise grow from run to run.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import sys
import time
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from dispatch import COLLECTIONS, RG, SUB, bulk_insert

from devtools.azurite import Azurite, start_azurite
from scheduler_lib.config import Settings
from scheduler_lib.dispatch import Dispatcher
from scheduler_lib.dispatch.tick import run_tick
from scheduler_lib.domain.collections import CollectionRecord
from scheduler_lib.execution import ExecutionMessage, ExecutionQueue
from scheduler_lib.store import TableStore
from scheduler_lib.store.collections import put_collection
from scheduler_lib.timeutil import utc_now

TARGET = "http://127.0.0.1:9/"  # never called: the bench times dispatch, not execution


class TimedQueue(ExecutionQueue):
    """The real execution queue, remembering when it last sent and how often."""

    last_send = 0.0
    sent = 0

    def send(self, message: ExecutionMessage, *, visible_at: datetime, now: datetime) -> None:
        super().send(message, visible_at=visible_at, now=now)
        TimedQueue.last_send = max(TimedQueue.last_send, time.time())
        TimedQueue.sent += 1


def count_round_trips() -> list[int]:
    """Count this process's HTTP requests to storage (azure-core's requests transport)."""
    from azure.core.pipeline.transport import RequestsTransport

    counter = [0]
    original = RequestsTransport.send

    def send(self: Any, request: Any, **kwargs: Any) -> Any:
        counter[0] += 1
        return original(self, request, **kwargs)

    RequestsTransport.send = send  # type: ignore[method-assign]  # counting, same behaviour
    return counter


@dataclass
class Outcome:
    sent: int
    last_send: float
    cpu: float
    round_trips: int


def _finish(counter: list[int], out: Any) -> None:
    times = os.times()
    out.put(Outcome(TimedQueue.sent, TimedQueue.last_send, times.user + times.system, counter[0]))


def single_timer(settings: Settings, now: datetime, offset: float, out: Any) -> None:
    """Today's path: one process, one tick over one shard."""
    counter = count_round_trips()
    store = TableStore(settings)
    run_tick(store, TimedQueue(settings), settings, now=now, clock=_clock(offset), workers=8)
    _finish(counter, out)


def dispatch_worker(settings: Settings, offset: float, stop: Any, out: Any) -> None:
    """One dispatch worker (a Functions instance): control messages one at a time."""
    counter = count_round_trips()
    clock = _clock(offset)
    store = TableStore(settings)
    dispatcher = Dispatcher(store, TimedQueue(settings), settings, clock)
    control = ExecutionQueue(settings, name=settings.dispatch_queue_name)
    while True:
        messages = control.receive(max_messages=1, visibility_timeout=300)
        for message in messages:
            dispatcher.pair(message.body, now=clock())
            control.delete(message)
        if not messages:
            if stop.is_set():
                break
            time.sleep(0.05)
    _finish(counter, out)


def _clock(offset: float) -> Any:
    """The simulated clock: real time shifted to just before the jobs' minute."""
    return lambda: utc_now() + timedelta(seconds=offset)


def cpu_of(process: psutil.Process) -> float:
    total = 0.0
    for p in [process, *process.children(recursive=True)]:
        times = p.cpu_times()
        total += times.user + times.system
    return total


@dataclass
class Run:
    label: str
    due: int
    workers: int
    sent: int
    seconds: float
    azurite_cpu: float
    our_cpu: float
    round_trips: int

    @property
    def rate(self) -> float:
        return self.sent / self.seconds if self.seconds else 0.0


def one_run(
    tables: Azurite, settings: Settings, due: int, workers: int, first: int, url: str
) -> Run:
    """`due` jobs in one minute, dispatched by `workers` worker processes (0: single timer)."""
    queues = start_azurite()
    try:
        run_settings = replace(
            settings,
            storage_connection_string=tables.connection_string.replace(
                f":{tables.queue_port}/", f":{queues.queue_port}/"
            ),
            dispatch_shards=settings.dispatch_shards if workers else 1,
            storage_prefix=f"run{first}",  # tables of its own: no cursor or row of another run
        )
        store = TableStore(run_settings)
        store.ensure_tables()
        for c in range(COLLECTIONS):
            put_collection(store, CollectionRecord(SUB, RG, f"c{c:02d}", "local"))
        ExecutionQueue(run_settings).ensure()
        ExecutionQueue(run_settings, name=run_settings.dispatch_queue_name).ensure()
        minute = utc_now().replace(second=0, microsecond=0) + timedelta(days=3, minutes=first)
        bulk_insert(store, [minute + timedelta(seconds=i % 60) for i in range(due)], first=first,
                    url=url)  # fmt: skip
        now = minute - timedelta(seconds=30)
        offset = (now - utc_now()).total_seconds()
        azurites = [psutil.Process(a.process.pid) for a in (tables, queues)]
        before = sum(cpu_of(p) for p in azurites)
        ctx = mp.get_context("fork")
        out, stop = ctx.Queue(), ctx.Event()
        started = time.time()
        if workers:
            procs = [
                ctx.Process(target=dispatch_worker, args=(run_settings, offset, stop, out))
                for _ in range(workers)
            ]
            for p in procs:
                p.start()
            coordinator = Dispatcher(store, ExecutionQueue(run_settings), run_settings)
            control = ExecutionQueue(run_settings, name=run_settings.dispatch_queue_name)
            started = time.time()
            coordinator.coordinate(control, now=now + timedelta(seconds=time.time() - started))
            stop.set()  # workers leave once the dispatch queue is empty
        else:
            procs = [ctx.Process(target=single_timer, args=(run_settings, now, offset, out))]
            procs[0].start()
        outcomes = [out.get(timeout=1800) for _ in procs]
        for p in procs:
            p.join()
        azurite_cpu = sum(cpu_of(p) for p in azurites) - before
    finally:
        queues.stop()
    label = f"{workers} dispatch worker(s)" if workers else "single timer (today)"
    return Run(
        label, due, workers,
        sent=sum(o.sent for o in outcomes),
        seconds=max(o.last_send for o in outcomes) - started,
        azurite_cpu=azurite_cpu,
        our_cpu=sum(o.cpu for o in outcomes),
        round_trips=sum(o.round_trips for o in outcomes),
    )  # fmt: skip


def progress(text: str) -> None:
    print(f"[{utc_now():%H:%M:%S}] {text}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--due", default="1000,5000,10000")
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--shards", type=int, default=8)
    args = parser.parse_args(argv)
    dues = [int(n) for n in args.due.split(",")]
    worker_counts = [0] + [int(n) for n in args.workers.split(",")]

    tables = start_azurite()
    runs: list[Run] = []
    try:
        settings = Settings(
            storage_connection_string=tables.connection_string, dispatch_shards=args.shards
        )
        first = 0
        for due in dues:
            for rep in range(args.reps):
                for workers in worker_counts:
                    progress(f"{due} due, {workers or 'single timer'} workers, rep {rep + 1}")
                    runs.append(one_run(tables, settings, due, workers, first, TARGET))
                    first += due
    finally:
        tables.stop()
    print_table(runs, args.shards)


def print_table(runs: list[Run], shards: int) -> None:
    reps = len(runs) // len({(r.due, r.workers) for r in runs})
    print(f"shards: {shards}; medians of {reps} rep(s)")
    print()
    print(
        "| due | path | sent/s | tick→last send (s) | vs today | Azurite CPU s | our CPU s "
        "| round trips/occurrence |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for due in sorted({r.due for r in runs}):
        base = None
        for workers in sorted({r.workers for r in runs}):
            same = [r for r in runs if r.due == due and r.workers == workers]
            seconds = statistics.median(r.seconds for r in same)
            rate = statistics.median(r.rate for r in same)
            if base is None:
                base = seconds
            trips = statistics.median(r.round_trips / max(r.sent, 1) for r in same)
            print(
                f"| {due} | {same[0].label} | {rate:,.0f} | {seconds:.2f} "
                f"| {base / seconds:.2f}× | {statistics.median(r.azurite_cpu for r in same):.1f} "
                f"| {statistics.median(r.our_cpu for r in same):.1f} | {trips:.2f} |"
            )


if __name__ == "__main__":
    main()
