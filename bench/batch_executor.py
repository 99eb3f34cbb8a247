"""The executor's side of a batch message, counted: N occurrences due at one second sent as N
lone queue messages, then as one batch message (`domain/messages.py` `batch_json`).

    .venv/bin/python bench/batch_executor.py [--jobs 16] [--watchdog claim|heartbeat]

Against a fresh Azurite and a local HTTP target, with the real clock: each round makes N
one-time Http jobs due at the same second ~1.5 s ahead, sends their execution messages
(the dispatcher's sends, done here), takes them off the queue and runs each through the
local host's `process_message` (what the Functions host does with a queue message: one
invocation, then its delete), the lone ones each on a thread of their own as the host's
slots would. Prints, per occurrence: the queue operations by kind (the send, the host's
delete, the executor's own: watchdogs), table transactions, function executions, and the
invocation seconds (the early hold included) and the seconds at least one ran (`active`,
what Flex Consumption bills). The counts are exact (`storage_calls`); the seconds are
wall time on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["SCHEDULER_BENCH_COUNT_CALLS"] = str(Path(tempfile.mkdtemp()) / "calls.json")

from devtools import devhost  # noqa: E402  (counts invocations: the setting above first)
from devtools.call_path import _settings, _target  # noqa: E402
from scheduler_lib import storage_calls  # noqa: E402
from scheduler_lib.domain import Bookkeeping, JobDefinition, JobRecord, JobState  # noqa: E402
from scheduler_lib.domain.collections import CollectionRecord  # noqa: E402
from scheduler_lib.domain.messages import ExecutionMessage, batch_json  # noqa: E402
from scheduler_lib.runtime import Runtime  # noqa: E402
from scheduler_lib.store.collections import put_collection  # noqa: E402
from scheduler_lib.store.jobs import put_job  # noqa: E402
from scheduler_lib.watchdog_choice import WatchdogChoice  # noqa: E402


def _messages(runtime: Runtime, url: str, count: int, due: datetime) -> list[ExecutionMessage]:
    action = {"type": "Http", "request": {"uri": url, "method": "POST", "body": "ping"}}
    messages = []
    for _ in range(count):
        record = JobRecord(
            "Sub-1", "rg", "coll", f"job-{uuid.uuid4().hex[:8]}",
            JobDefinition({"startTime": due.isoformat(), "action": action}),
            created_time=due - timedelta(hours=1), state=JobState.ENABLED,
            next_execution_time=None, bookkeeping=Bookkeeping(occurrences=1),
        )  # fmt: skip
        record = put_job(runtime.store, record)
        messages.append(ExecutionMessage.scheduled(record.key, due, 1, record.incarnation))
    return messages


def _round(runtime: Runtime, url: str, count: int, *, batch: bool) -> Counter[str]:
    due = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=3)
    messages = _messages(runtime, url, count, due)
    bodies = [batch_json(messages)] if batch else [m.to_json() for m in messages]
    while datetime.now(UTC) < due - timedelta(seconds=1.5):  # delivered 1.5 s early
        time.sleep(0.01)
    before = Counter(storage_calls.snapshot())
    for body in bodies:  # the dispatcher's sends
        runtime.queue.send_body(body)
    received = []
    while len(received) < len(bodies):
        received += runtime.queue.receive(max_messages=32, visibility_timeout=60)
    with ThreadPoolExecutor(max_workers=len(received)) as pool:
        list(pool.map(lambda m: devhost.process_message(runtime, m), received))
    grown = Counter(storage_calls.snapshot())
    grown.subtract(before)
    if os.environ.get("BENCH_VERBOSE"):
        print(sorted((k, v) for k, v in grown.items() if v))
    return grown


def _row(counts: Counter[str], n: int) -> dict[str, float]:
    def of(*parts: str) -> float:
        return sum(v for k, v in counts.items() if all(p in k for p in parts)) / n

    return {
        "send (the dispatcher's, made here)": of("?: - [queue POST]"),
        "delete (host)": of("host.", "[queue DELETE]"),
        "receive (host polling)": of("?: - [queue GET]"),
        "executor's queue ops (watchdogs)": of("[queue") - of("?: -") - of("host.", "[queue"),
        "table transactions": of("[table"),
        "function executions": of("invocation:"),
        "invocation seconds": (of("seconds:") - of("seconds: active")) / 1000,
        "active seconds": of("seconds: active") / 1000,
    }  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=16)
    parser.add_argument("--watchdog", choices=["claim", "heartbeat"], default="claim")
    args = parser.parse_args(argv)
    with _settings() as settings, _target() as url:
        settings = replace(settings, watchdog=WatchdogChoice(args.watchdog))
        runtime = Runtime(settings)
        runtime.ensure_storage()
        enabled = CollectionRecord("Sub-1", "rg", "coll", "westeurope", {"state": "Enabled"})
        put_collection(runtime.store, enabled)
        _round(runtime, url, 2, batch=True)  # warm-up: clients, connections
        lone = _row(_round(runtime, url, args.jobs, batch=False), args.jobs)
        batch = _row(_round(runtime, url, args.jobs, batch=True), args.jobs)
    print(f"{args.jobs} occurrences due at one second, SCHEDULER_WATCHDOG={args.watchdog}")
    print(f"\n| per occurrence | {args.jobs} lone messages | one batch of {args.jobs} |")
    print("|---|---:|---:|")
    for name in lone:
        print(f"| {name} | {lone[name]:.3f} | {batch[name]:.3f} |")


if __name__ == "__main__":
    main()
