"""Benchmark of the dispatcher against a local Azurite: cost follows what is due.

    .venv/bin/python bench/dispatch.py [--jobs 50000] [--due 1000] [--reps 3] [--realtime ...]

Stores `--jobs` hourly HTTP jobs in 50 collections, bulk-inserted with table transactions
(100 per batch per partition; setup time is printed separately), and measures:

1. Ticks with `--due` jobs due in the minute, first while only a few thousand jobs are stored
   (the baseline), then among all of them: entities read and tick duration should not move.
   Then the same tick with one worker thread instead of the pool.
2. Real-time runs: jobs due in the next real minute, one per second of it in turn; the tick
   runs at the start of the minute before (the timer trigger's look-ahead). A poller receives
   from the execution queue as the queue trigger does (every `POLL_INTERVAL` s when the queue
   is empty: host.json's maxPollingInterval) and records when it received each message
   against its occurrence (negative: early, as occurrences are delivered 1-2 s ahead). With
   executor threads, the real executor (`execute.Executor`) claims each message, waits
   for its second and runs the action against a local HTTP server, which records each
   request's arrival against its `x-ms-scheduler-expected-execution-time` header: the
   lateness of the action start. The default run is 1000 due with 28 executor threads
   (host.json's batchSize + newBatchThreshold: one Functions instance's concurrency).

The timed ticks of part 1 send their 7,000 messages to the queue of a second Azurite, stopped
before the real-time runs. Azurite keeps every queue's messages in one collection that each
queue operation scans, and deleting thousands of them later keeps it busy for a minute of
garbage collection: either would slow the real-time run several-fold, and Azure Storage has
neither cost.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from queue import Empty, Queue
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from http_target import Target

from devtools.azurite import start_azurite
from devtools.polling import MAX_POLLING_INTERVAL
from scheduler_lib.config import Settings
from scheduler_lib.dispatch.tick import TickReport, run_tick
from scheduler_lib.domain import Bookkeeping, JobDefinition, JobRecord
from scheduler_lib.domain.collections import CollectionRecord
from scheduler_lib.domain.messages import parse_body
from scheduler_lib.execution.execute import Executor
from scheduler_lib.store import jobs as job_store
from scheduler_lib.store.collections import put_collection
from scheduler_lib.store.due_index import TABLE as DUE_TABLE
from scheduler_lib.store.due_index import minute_key, partition_key, shard_of
from scheduler_lib.store.execution_queue import ExecutionQueue, ReceivedMessage
from scheduler_lib.store.tables import TableStore
from scheduler_lib.timeutil import iso_z as iso
from scheduler_lib.timeutil import utc_now

SUB, RG, COLLECTIONS = "bench-sub", "bench-rg", 50
BATCH = 100
POLL_INTERVAL = MAX_POLLING_INTERVAL  # host.json's: the longest an idle trigger waits


# ---------------------------------------------------------------- bulk setup


def bulk_insert(store: TableStore, dues: list[datetime], *, first: int, url: str) -> float:
    """Insert one hourly job per entry of `dues` (and its due-index row) with transactions;
    returns the seconds it took."""
    started = time.monotonic()
    created = utc_now() - timedelta(minutes=1)
    by_partition: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for offset, due in enumerate(dues):
        number = first + offset
        record = JobRecord(
            SUB,
            RG,
            f"c{number % COLLECTIONS:02d}",
            f"job{number:06d}",
            definition=JobDefinition(
                {
                    "startTime": iso(due),
                    "recurrence": {"frequency": "Hour", "interval": 1},
                    "action": {
                        "type": "Http",
                        "request": {"method": "POST", "uri": url, "body": "bench"},
                        "retryPolicy": {"retryType": "None"},
                    },
                }
            ),
            created_time=created,
            next_execution_time=due,
            bookkeeping=Bookkeeping(occurrences=0),
        )
        # jobs._to_entity is private: the store has no batch insert (asked the lead for one).
        entity = job_store._to_entity(record)
        by_partition.setdefault((job_store.TABLE, entity["PartitionKey"]), []).append(entity)
        shard = shard_of(record.key, store.settings.dispatch_shards)
        index_row = {
            "PartitionKey": partition_key(shard, minute_key(due)),
            "RowKey": record.key,
            "Due": due,
        }
        by_partition.setdefault((DUE_TABLE, index_row["PartitionKey"]), []).append(index_row)
    for (table, _), entities in by_partition.items():
        client = store.table(table)
        for i in range(0, len(entities), BATCH):
            client.submit_transaction([("upsert", e) for e in entities[i : i + BATCH]])
    return time.monotonic() - started


# ---------------------------------------------------------------- real-time run


def executor(
    settings: Settings, stop: threading.Event, received: list[float], workers: int
) -> None:
    """What the queue trigger does: one poller receives batches (`POLL_INTERVAL` between
    empty polls) and `workers` threads run the real `Executor`, then delete. The poller
    takes every visible message at once (hidden for 5 minutes while it waits), so the time
    it receives a message is when the message became visible, whatever the backlog."""
    work: Queue[ReceivedMessage] = Queue()

    def poll() -> None:
        queue = ExecutionQueue(settings)
        while not stop.is_set():
            messages = queue.receive(max_messages=32, visibility_timeout=300)
            now = utc_now()
            for message in messages:
                for member in parse_body(message.body):  # a batch: each occurrence it carries
                    received.append((now - member.occurrence).total_seconds())
                work.put(message)
            if not messages:
                time.sleep(POLL_INTERVAL)

    def run() -> None:
        store, queue = TableStore(settings), ExecutionQueue(settings)
        handler = Executor(store, queue, settings, utc_now, time.sleep)
        while not stop.is_set():
            try:
                message = work.get(timeout=0.2)
            except Empty:
                continue
            if not workers:  # a run timing the messages alone: just delete them
                queue.delete(message)
                continue
            handler.handle_body(
                message.body, message_id=message.id, dequeue_count=message.dequeue_count
            )
            queue.delete(message)

    threads = [threading.Thread(target=poll)] + [
        threading.Thread(target=run) for _ in range(workers or 2)
    ]
    for thread in threads:
        thread.start()
    stop.wait()
    for thread in threads:
        thread.join()


def real_time_run(
    store: TableStore,
    settings: Settings,
    target: Target,
    due: int,
    first: int,
    executors: int,
    url: str,
) -> tuple[TickReport, list[float], list[float], float]:
    """Jobs due in the next real minute; tick at the start of the minute before it."""
    now = utc_now()
    minute = now.replace(second=0, microsecond=0) + timedelta(minutes=3)
    dues = [minute + timedelta(seconds=i % 60) for i in range(due)]
    setup = bulk_insert(store, dues, first=first, url=url)
    tick_at = minute - timedelta(minutes=1)
    if utc_now() > tick_at:
        raise SystemExit("setup of the real-time run took too long; rerun")
    stop, received = threading.Event(), []
    host = threading.Thread(target=executor, args=(settings, stop, received, executors))
    host.start()
    time.sleep(max(0.0, (tick_at - utc_now()).total_seconds()))
    report = run_tick(store, ExecutionQueue(settings), settings, now=utc_now(), clock=utc_now)
    deadline = minute + timedelta(minutes=3)
    while utc_now() < deadline and (target.count() if executors else len(received)) < due:
        time.sleep(0.2)
    stop.set()
    host.join()
    return report, target.take(), received, setup


# ---------------------------------------------------------------- report


def progress(text: str) -> None:
    print(f"[{utc_now():%H:%M:%S}] {text}", file=sys.stderr, flush=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def timed_ticks(
    store: TableStore, settings: Settings, minutes: list[datetime], workers: int
) -> list[TickReport]:
    """One tick per minute, each at 30 s before it (the minute is the look-ahead)."""
    queue = ExecutionQueue(settings)
    reports = []
    for m in minutes:
        now = m - timedelta(seconds=30)
        clock = tick_clock(now)
        reports.append(run_tick(store, queue, settings, now=now, clock=clock, workers=workers))
    return reports


def tick_clock(now: datetime) -> Callable[[], datetime]:
    """The tick's simulated `now`, advancing with real time: the bench is the entry point
    here, and this clock is how the tick measures its own duration."""
    started = time.monotonic()
    return lambda: now + timedelta(seconds=time.monotonic() - started)


def row(label: str, stored: int, reports: list[TickReport], base: float | None) -> str:
    duration = statistics.median(r.duration for r in reports)
    reads = statistics.median(r.entities_read for r in reports)
    due = statistics.median(r.messages_sent for r in reports)
    ratio = f"{duration / base:5.2f}" if base else " 1.00"
    r = reports[0]
    return (
        f"| {label:<34} | {stored:>6} | {due:>5.0f} | {r.rows_read:>5} | {r.job_entities_read:>5} "
        f"| {r.collection_entities_read:>4} | {reads:>6.0f} | {reads / max(due, 1):5.2f} "
        f"| {duration:6.2f} | {ratio} |"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=50_000)
    parser.add_argument("--due", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument(
        "--realtime",
        default="1000:28",
        help="real-time runs as due:executor-threads (0: no executor, the poller only "
        "receives and deletes, to time the messages alone)",
    )
    args = parser.parse_args(argv)

    azurite, throwaway = start_azurite(), start_azurite()
    target = Target()
    url = target.url
    try:
        settings = Settings(storage_connection_string=azurite.connection_string)
        quiet = Settings(  # timed ticks: the same tables, another Azurite's queue
            storage_connection_string=azurite.connection_string.replace(
                f":{azurite.queue_port}/", f":{throwaway.queue_port}/"
            ),
        )
        store = TableStore(settings)
        store.ensure_tables()
        for settings_ in (settings, quiet):
            ExecutionQueue(settings_).ensure()
        for c in range(COLLECTIONS):
            put_collection(store, CollectionRecord(SUB, RG, f"c{c:02d}", "local"))

        far = utc_now().replace(second=0, microsecond=0) + timedelta(days=2)
        groups = [far + timedelta(minutes=7 * g) for g in range(2 * args.reps + 1)]
        small = [g + timedelta(seconds=i % 60) for g in groups for i in range(args.due)]
        setup = bulk_insert(store, small, first=0, url=url)
        stored = len(small)
        progress("baseline ticks")
        base = timed_ticks(store, quiet, groups[: args.reps], workers=8)

        progress("bulk insert of the other jobs")
        filler = args.jobs - stored - args.due
        filler_dues = [far + timedelta(days=1, minutes=i // 1000) for i in range(filler)]
        setup += bulk_insert(store, filler_dues, first=stored, url=url)
        stored += filler
        progress("ticks among all jobs")
        big = timed_ticks(store, quiet, groups[args.reps : 2 * args.reps], workers=8)
        seq = timed_ticks(store, quiet, groups[2 * args.reps :], workers=1)
        throwaway.stop()

        runs = []
        for spec in args.realtime.split(","):
            count, threads = (int(n) for n in spec.split(":"))
            progress(f"real-time run of {count} with {threads} executor threads")
            runs.append(
                (count, stored, *real_time_run(
                    store, settings, target, count, stored, threads, url
                ))
            )  # fmt: skip
            stored += count
    finally:
        target.stop()
        throwaway.stop()
        azurite.stop()

    base_duration = statistics.median(r.duration for r in base)
    print(f"setup: {len(small) + filler} jobs in {setup:.1f} s (table transactions)")
    print()
    print(
        "| tick (median of reps)              | stored |   due |  rows |  jobs "
        "| coll | reads | reads/due | tick s | vs base |"
    )
    print("|" + "---|" * 10)
    print(row("baseline: pool of 8, few stored", len(small), base, None))
    print(row("pool of 8, all stored", len(small) + filler, big, base_duration))
    print(row("one worker, all stored", len(small) + filler, seq, base_duration))
    for count, before, report, *_ in runs:
        print(row(f"real-time tick, {count} due", before + count, [report], base_duration))
    print()
    print("| real-time run: lateness (s)       |   count |   p50 |   p99 |   max |")
    print("|---|---|---|---|---|")
    for count, _, _, starts, received, _ in runs:
        for label, values in (("action start", starts), ("message received", received)):
            if values:
                print(
                    f"| {count:>4} due: {label:<22} | {len(values):>7} "
                    f"| {percentile(values, 0.5):5.2f} | {percentile(values, 0.99):5.2f} "
                    f"| {max(values):5.2f} |"
                )


if __name__ == "__main__":
    main()
