"""Azurite's CPU per storage request, by the kinds an occurrence makes, as its tables grow.

    .venv/bin/python bench/azurite_scale.py [--sizes 300,2000,5000] [--requests 200]
                                            [--runs 5] [--history 2] [--backlog 1]
                                            [--root PATH]

docs/cost.md found Azurite spending ~28 ms per occurrence with 2,000 jobs in a minute
against ~8-23 ms with 300. For each size N, a fresh Azurite (in memory, as the tests and
the benchmarks run it) is loaded as the 2,000-a-minute run leaves it at its busiest: N jobs
in collections of 1,000 (their counters too), `--history` entries per job with its counter,
N due-index rows in one minute over the shards, and N execution messages sent ahead
(invisible; `--backlog` per job), then each kind of request an occurrence makes is sent
`--requests` times from this process, one at a time, and Azurite's CPU (utime+stime, /proc)
over the batch is divided by the requests. `--runs` rounds of every kind, interleaved; the
median is printed, with its ratio to the smallest size. The kinds use the scheduler's
adapters (`store/`) where an adapter makes the request, so a change to one shows here
(`--root` runs another checkout's). `NODE_OPTIONS=--require=$PWD/bench/azurite_empty_remove.js`
runs Azurite without its queue artefact (that file says which).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from proc_cpu import tree_cpu  # noqa: E402

PER_COLLECTION = 1000
SUB, RG = "bench", "bench"
#: A job's stored definition, about the size of bench/cost.py's one-time HTTP jobs.
DEFINITION = json.dumps(
    {
        "properties": {
            "startTime": "2026-11-26T10:00:00Z",
            "action": {
                "type": "Http",
                "request": {"method": "POST", "uri": "http://127.0.0.1:40000/" + "x" * 40},
                "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT30S", "retryCount": 4},
            },
            "state": "Enabled",
            "status": {"executionCount": 0, "failureCount": 0, "faultedCount": 0},
        }
    }
)


class Loaded:
    """One Azurite with N jobs and their rows, and the scheduler's clients on it."""

    def __init__(self, size: int, history: int, backlog: int) -> None:
        from devtools.azurite import start_azurite
        from scheduler_lib.config import Settings
        from scheduler_lib.store.execution_queue import ExecutionQueue
        from scheduler_lib.store.tables import TableStore

        self.size = size
        self.azurite = start_azurite()
        self.settings = Settings(
            storage_connection_string=self.azurite.connection_string,
            storage_prefix="b" + uuid.uuid4().hex[:6],
        )
        self.store = TableStore(self.settings)
        self.store.ensure_tables()
        self.queue = ExecutionQueue(self.settings).ready()
        self.minute = (datetime.now(UTC) + timedelta(minutes=30)).replace(second=0, microsecond=0)
        self.jobs = [(f"c{i // PER_COLLECTION}", f"j{i:05d}") for i in range(size)]
        self.etags: dict[int, str] = {}
        self._load(history, backlog)

    def job_key(self, i: int) -> str:
        collection, name = self.jobs[i]
        return f"{SUB}|{RG}|{collection}|{name}"

    def _load(self, history: int, backlog: int) -> None:
        from scheduler_lib.store.due_index import add_due_rows
        from scheduler_lib.store.partition_counter import COUNTER_ROW

        jobs, collections = self.store.table("Jobs"), self.store.table("JobCollections")
        by_collection: dict[str, list[dict[str, Any]]] = {}
        for i, (collection, _) in enumerate(self.jobs):
            by_collection.setdefault(f"{SUB}|{RG}|{collection}", []).append(self._job(i))
        for pk, rows in by_collection.items():
            collections.upsert_entity(
                {"PartitionKey": SUB, "RowKey": f"{RG}|{pk.split('|')[-1]}", "Sku": "P20Premium"}
            )
            for at in range(0, len(rows), 100):
                jobs.submit_transaction([("upsert", row) for row in rows[at : at + 100]])
            jobs.upsert_entity({"PartitionKey": pk, "RowKey": COUNTER_ROW, "Count": len(rows)})
        table = self.store.table("JobHistory")
        start = datetime.now(UTC) - timedelta(days=1)

        def one(i: int) -> None:
            entries = [self._entry(i, start + timedelta(minutes=h)) for h in range(history)]
            pk = entries[0]["PartitionKey"]
            counter: dict[str, Any] = {"PartitionKey": pk, "RowKey": COUNTER_ROW, "Count": history}
            table.submit_transaction([("create", e) for e in [*entries, counter]])

        if history:
            with ThreadPoolExecutor(4) as pool:
                list(pool.map(one, range(self.size)))
        step = timedelta(seconds=60 / self.size)
        due = [(self.job_key(i), self.minute + i * step) for i in range(self.size)]
        add_due_rows(self.store, due)
        hidden = self.queue.client
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda i: hidden.send_message(b"x" * 300, visibility_timeout=3600),
                          range(backlog)))  # fmt: skip

    def _job(self, i: int) -> dict[str, Any]:
        collection, name = self.jobs[i]
        return {
            "PartitionKey": f"{SUB}|{RG}|{collection}",
            "RowKey": name,
            "Definition": DEFINITION,
            "State": "Enabled",
            "ExecutionCount": 0,
            "NextExecutionTime": self.minute,
            "Bookkeeping": json.dumps({"executor": {"lease": None}}),
        }

    def _entry(self, i: int, at: datetime) -> dict[str, Any]:
        from scheduler_lib.store.history import _row_key

        return {
            "PartitionKey": f"{self.job_key(i)}|inc",
            "RowKey": _row_key(at),
            "StartTime": at,
            "EndTime": at,
            "ExpectedExecutionTime": at,
            "ActionName": "MainAction",
            "Status": "Completed",
            "Message": "Http Action - Response from host '127.0.0.1': 'OK' Response Headers: ...",
            "RetryCount": 0,
            "RepeatCount": 1,
        }

    def stop(self) -> None:
        self.azurite.stop()


def kinds(env: Loaded, count: int) -> dict[str, Callable[[int], int]]:
    """Each kind: a function of the round number that sends `count` requests of it (or says
    how many it sent), chosen among the N jobs so that rounds do not repeat rows."""
    from scheduler_lib.domain.history_counter import HistoryCounter
    from scheduler_lib.store.dispatch_shards import acquire_shard, release_shard
    from scheduler_lib.store.due_index import add_due_rows, due_rows, remove_due_rows
    from scheduler_lib.store.history import HistoryEntry, add_counted_history
    from scheduler_lib.store.partition_counter import counter_entity
    from scheduler_lib.store.tables import etag_kwargs

    jobs, history = env.store.table("Jobs"), env.store.table("JobHistory")
    collections = env.store.table("JobCollections")
    pick = [(r * 7919) % env.size for r in range(count)]
    counters: dict[int, HistoryCounter | None] = {}

    def point_read(_: int) -> int:
        for i in pick:
            jobs.get_entity(*_keys(env, i))
        return count

    def replace(_: int) -> int:
        from azure.data.tables import UpdateMode

        for i in pick:
            if i not in env.etags:
                env.etags[i] = str(jobs.get_entity(*_keys(env, i)).metadata["etag"])
            meta = jobs.update_entity(
                env._job(i), mode=UpdateMode.REPLACE, **etag_kwargs(env.etags[i])
            )
            env.etags[i] = str(meta["etag"])
        return count

    def collection(_: int) -> int:
        for i in pick:
            collections.get_entity(SUB, f"{RG}|{env.jobs[i][0]}")
        return count

    def counter_read(_: int) -> int:
        for i in pick:
            found = counter_entity(history, f"{env.job_key(i)}|inc")
            assert found is not None
            counters[i] = HistoryCounter(
                int(found["Count"]), tuple(json.loads(found.get("Oldest") or "[]")),
                found.metadata["etag"],
            )  # fmt: skip
        return count

    def history_write(r: int) -> int:
        at = datetime.now(UTC)
        for i in pick:
            entry = HistoryEntry(
                f"{env.job_key(i)}|inc", at, at, at, "MainAction", "Completed", "OK", 0, r
            )
            _, counters[i] = add_counted_history(env.store, entry, known=counters.get(i))
        return count

    def due_query(r: int) -> int:
        rows = 0
        for q in range(count // 10):
            shard = (q + r) % env.settings.dispatch_shards
            rows += len(list(due_rows(env.store, start=env.minute, through=env.minute,
                                      shard=shard)))  # fmt: skip
        return count // 10

    def due_query_empty(r: int) -> int:
        later = env.minute + timedelta(minutes=5)
        for q in range(count):
            list(due_rows(env.store, start=later, through=later,
                          shard=(q + r) % env.settings.dispatch_shards))  # fmt: skip
        return count

    def due_add_remove(r: int) -> int:
        at = env.minute + timedelta(minutes=10 + r)
        occurrences = [(env.job_key(i), at) for i in pick]
        add_due_rows(env.store, occurrences)
        rows = list(due_rows(env.store, start=at, through=at))
        remove_due_rows(env.store, rows)
        return 2 * len({row.partition for row in rows}) + env.settings.dispatch_shards

    def shard_bookkeeping(r: int) -> int:
        now = datetime.now(UTC)
        for q in range(count // 3):
            shard = q % env.settings.dispatch_shards
            lease, _ = acquire_shard(env.store, shard, owner=f"w{r}", now=now,
                                     duration=timedelta(seconds=30))  # fmt: skip
            assert lease is not None
            release_shard(env.store, lease, cursor=now)
        return 3 * (count // 3)

    client = env.queue.client
    received: list[Any] = []

    def queue_send(_: int) -> int:
        for _ in range(count):
            client.send_message(b"y" * 300)
        return count

    def queue_receive(_: int) -> int:
        requests = 0
        while len(received) < count:
            requests += 1
            received.extend(client.receive_messages(messages_per_page=16, max_messages=16,
                                                    visibility_timeout=300))  # fmt: skip
        return requests

    def queue_delete(_: int) -> int:
        for message in received:
            client.delete_message(message)
        received.clear()
        return count

    def queue_poll_empty(_: int) -> int:
        poison = env.queue.poison
        for _ in range(count):
            list(poison.receive_messages(messages_per_page=16, max_messages=16))
        return count

    return {
        "job point read": point_read,
        "job conditional replace": replace,
        "collection read": collection,
        "history counter read": counter_read,
        "history transaction (entry + counter)": history_write,
        "due-index query, a shard's due minute": due_query,
        "due-index query, an empty minute": due_query_empty,
        "due-index add + remove (transactions)": due_add_remove,
        "shard bookkeeping (read, lease, release)": shard_bookkeeping,
        "queue send": queue_send,
        "queue receive (16 a request)": queue_receive,
        "queue delete": queue_delete,
        "queue receive, an empty queue (a poll)": queue_poll_empty,
    }


def _keys(env: Loaded, i: int) -> tuple[str, str]:
    collection, name = env.jobs[i]
    return f"{SUB}|{RG}|{collection}", name


def measure(size: int, history: int, backlog: float, count: int, runs: int) -> dict[str, float]:
    started = time.monotonic()
    env = Loaded(size, history, round(size * backlog))
    took = time.monotonic() - started
    print(f"[{datetime.now(UTC):%H:%M:%S}] {size} jobs loaded in {took:.0f} s", file=sys.stderr)
    try:
        chosen = kinds(env, count)
        samples: dict[str, list[float]] = {name: [] for name in chosen}
        pid = env.azurite.process.pid
        for r in range(runs):
            for name, run in chosen.items():
                before = tree_cpu(pid)
                sent = run(r)
                samples[name].append((tree_cpu(pid) - before) / sent * 1000)
        return {name: statistics.median(values) for name, values in samples.items()}
    finally:
        env.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="300,2000,5000")
    parser.add_argument("--requests", type=int, default=200, help="per kind and round")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--history", type=int, default=2, help="entries per job")
    parser.add_argument("--backlog", type=float, default=1.0,
                        help="messages sent ahead (invisible), per job")  # fmt: skip
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--json", type=Path, help="also write the medians here")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(args.root.resolve()))
    sizes = [int(n) for n in args.sizes.split(",")]
    results = {n: measure(n, args.history, args.backlog, args.requests, args.runs) for n in sizes}
    first = results[sizes[0]]
    print(f"\nAzurite CPU ms per request (median of {args.runs} rounds of {args.requests}), "
          f"{args.root}; {args.backlog:g} message(s) sent ahead per job; "
          f"NODE_OPTIONS={os.environ.get('NODE_OPTIONS', '')!r}")  # fmt: skip
    print("| request kind | " + " | ".join(f"{n:,} jobs" for n in sizes) + " |")
    print("|---|" + "---:|" * len(sizes))
    for name in first:
        cells = [f"{results[n][name]:.2f}" + (
            f" ({results[n][name] / first[name]:.1f}×)" if n != sizes[0] and first[name] else "")
            for n in sizes]  # fmt: skip
        print(f"| {name} | " + " | ".join(cells) + " |")
    if args.json:
        args.json.write_text(json.dumps({str(k): v for k, v in results.items()}, indent=1))


if __name__ == "__main__":
    main()
