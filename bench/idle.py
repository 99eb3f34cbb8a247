"""What an idle (or lightly loaded) deployment spends per minute, counted exactly.

    .venv/bin/python bench/idle.py [--minutes 10] [--busy-jobs 0] [--root PATH]

A fresh Azurite and the real `Runtime` (as function_app.py builds it) on a simulated clock:
each minute the timer function runs (`Runtime.coordinate`), then the dispatch function once
per control message it left (`Runtime.dispatch`), as the Functions host would call them.
Storage requests are counted by `storage_calls` (`SCHEDULER_BENCH_COUNT_CALLS`), so the
numbers are exact and do not move with the machine's load. Two warm-up minutes (the first
ticks create the shards' states) are not counted; the counted minutes include one that
runs the overdue check (`anti_entropy`, every 5 minutes).

Printed per minute: function executions, table transactions, queue operations the app
makes (sends, plus the host's delete of each message it handled) and the host's receives
of those messages (the Functions host's polling receives them; counted apart), and how long
at least one invocation ran (what Flex Consumption bills GB-s for; this machine's timing).
`--busy-jobs N`: N jobs that each run every minute (a lightly loaded deployment).
`--root` runs another checkout's code (compare a base tree: `git worktree add --detach`).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
T0 = datetime(2026, 3, 4, 9, 0, 0, tzinfo=UTC)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=int, default=10)
    parser.add_argument("--busy-jobs", type=int, default=0)
    parser.add_argument("--root", type=Path, default=ROOT)
    args = parser.parse_args()
    sys.path.insert(0, str(args.root.resolve()))
    os.environ["SCHEDULER_BENCH_COUNT_CALLS"] = tempfile.mktemp(suffix=".json")
    counts = run(args.minutes, args.busy_jobs)
    minutes = args.minutes
    table = sum(v for k, v in counts.items() if "[table" in k)
    queue = sum(v for k, v in counts.items() if "[queue" in k and "GET" not in k)
    received = sum(v for k, v in counts.items() if "[queue GET" in k)
    executions = sum(v for k, v in counts.items() if k.startswith("invocation:"))
    print(f"{args.root}: {minutes} minutes, {args.busy_jobs} busy jobs")
    print(f"per minute: {executions / minutes:.2f} executions, {table / minutes:.2f} table "
          f"transactions, {queue / minutes:.2f} queue operations "
          f"(+ {received / minutes:.2f} receives)")  # fmt: skip
    print(f"invocations running {counts['seconds: active'] / minutes:.0f} ms a minute "
          f"(this machine, under its load: the instance's executing time)")  # fmt: skip
    for key, value in sorted(counts.items(), key=lambda kv: -kv[1]):
        if not key.startswith("seconds"):
            print(f"  {value / minutes:7.2f}  {key}")


def run(minutes: int, busy_jobs: int) -> Counter[str]:
    from devtools.azurite import start_azurite
    from scheduler_lib import storage_calls
    from scheduler_lib.config import Settings
    from scheduler_lib.runtime import Runtime

    server = start_azurite()
    try:
        settings = Settings(
            storage_connection_string=server.connection_string,
            api_keys=("bench-key",),
            storage_prefix="idle",
            storage_queue_endpoint=server.queue_endpoint_template,
        )
        clock = [T0]
        runtime = Runtime(settings, clock=lambda: clock[0])
        runtime.ensure_storage()
        if busy_jobs:
            _busy(runtime, busy_jobs)
        before: Counter[str] = Counter()
        for minute in range(2 + minutes):
            if minute == 2:
                before = Counter(storage_calls.snapshot())
            clock[0] = T0 + timedelta(minutes=minute)
            with storage_calls.invoked("dispatcher"):
                runtime.coordinate()
            while received := runtime.dispatch_queue.receive(max_messages=32):
                for message in received:
                    with storage_calls.invoked("dispatch_pair"):
                        runtime.dispatch(message.body)
                    runtime.dispatch_queue.delete(message)
            while received := runtime.queue.receive(max_messages=32):  # not counted below
                for message in received:
                    runtime.queue.delete(message)
        after = Counter(storage_calls.snapshot())
        return Counter({k: after[k] - before[k] for k in after if after[k] - before[k]})
    finally:
        server.stop()


def _busy(runtime: Any, n: int) -> None:
    """`n` jobs in one collection, each running every minute from T0 + 30 s (their messages
    are taken off the execution queue unexecuted: only the dispatcher's part is counted)."""
    from scheduler_lib.domain import Bookkeeping, JobDefinition, JobRecord
    from scheduler_lib.domain.collections import CollectionRecord
    from scheduler_lib.store.collections import put_collection
    from scheduler_lib.store.due_index import add_due
    from scheduler_lib.store.jobs import put_job

    store = runtime.store
    props = {"state": "Enabled"}
    put_collection(store, CollectionRecord("sub", "rg", "c", "westeurope", properties=props))
    first = T0 + timedelta(seconds=30)
    definition = {
        "startTime": first.isoformat().replace("+00:00", "Z"),
        "action": {"type": "Http", "request": {"method": "GET", "uri": "http://127.0.0.1:9/"}},
        "recurrence": {"frequency": "Minute", "interval": 1},
    }
    for i in range(n):
        job = JobRecord(
            "sub", "rg", "c", f"j{i}", definition=JobDefinition(definition), created_time=T0,
            state="Enabled", next_execution_time=first, bookkeeping=Bookkeeping(occurrences=0),
        )  # fmt: skip
        add_due(store, put_job(store, job).key, first)


if __name__ == "__main__":
    main()
