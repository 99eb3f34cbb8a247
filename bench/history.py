"""Benchmark of job history upkeep against a local Azurite: deleting a big history, and the
price of the cap enforced at write.

    .venv/bin/python bench/history.py [--entries 20000] [--writes 200]

- Deleting a job's history: what a DELETE used to do inline (`delete_history` of every entry,
  a transaction per 100) against what it does now (`request_history_purge`: one upsert), and
  how many dispatcher ticks (`purge_histories` with the tick budget) the background purge
  then takes.
- One history write (`add_history`): under the cap (counted insert: a point read and a
  transaction), at the cap (the transaction also deletes the oldest entry; every
  `REMEMBERED` writes the partition's keys are read once) and, as the baseline, a raw
  `create_entity` of the same entity.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from devtools.azurite import start_azurite
from scheduler_lib.config import Settings
from scheduler_lib.store.history import TABLE, HistoryEntry, add_history, delete_history
from scheduler_lib.store.history_purge import TICK_BUDGET, purge_histories, request_history_purge
from scheduler_lib.store.tables import TableStore

T0 = datetime(2026, 3, 4, tzinfo=UTC)


def _fill(store: TableStore, key: str, count: int) -> None:
    """`count` entries of a typical size, written in transactions (setup, not measured)."""
    table = store.table(TABLE)
    text = "Http Action - Response from host 'example.com': 'OK' " + "b" * 200
    rows = [
        {"PartitionKey": key, "RowKey": f"{i:017d}-bench", "StartTime": T0, "EndTime": T0,
         "ExpectedExecutionTime": T0, "ActionName": "MainAction", "Status": "Completed",
         "Message": text}
        for i in range(count)
    ]  # fmt: skip
    for i in range(0, count, 100):
        table.submit_transaction([("create", row) for row in rows[i : i + 100]])


def _per_write(write, writes: int) -> tuple[float, float]:
    """p50 and p95 of one write, in milliseconds."""
    samples = []
    for _ in range(writes):
        started = time.perf_counter()
        write()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.95) - 1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=20000)
    parser.add_argument("--writes", type=int, default=200)
    args = parser.parse_args()
    azurite = start_azurite()
    try:
        settings = Settings(storage_connection_string=azurite.connection_string)
        store = TableStore(settings)
        store.ensure_tables()

        _fill(store, "b|r|c|inline", args.entries)
        started = time.perf_counter()
        delete_history(store, "b|r|c|inline")
        inline = time.perf_counter() - started
        _fill(store, "b|r|c|queued", args.entries)
        started = time.perf_counter()
        request_history_purge(store, "b|r|c|queued")
        queued = time.perf_counter() - started
        ticks, started = 0, time.perf_counter()
        while purge_histories(store, budget=TICK_BUDGET):
            ticks += 1
        per_tick = (time.perf_counter() - started) / max(ticks, 1)

        entry = HistoryEntry("b|r|c|writes", T0, T0, T0, "MainAction", "Completed", "ok")
        under = _per_write(lambda: add_history(store, entry), args.writes)
        full = HistoryEntry("b|r|c|full", T0, T0, T0, "MainAction", "Completed", "ok")
        for _ in range(60):
            add_history(store, full, keep=50)
        at_cap = _per_write(lambda: add_history(store, full, keep=50), args.writes)
        table, counter = store.table(TABLE), iter(range(10**9))
        raw = _per_write(
            lambda: table.create_entity(
                {"PartitionKey": "b|r|c|raw", "RowKey": f"{next(counter):09d}", "StartTime": T0,
                 "Message": "ok"}
            ),
            args.writes,
        )  # fmt: skip
    finally:
        azurite.stop()

    print(f"\nDeleting a job with {args.entries} history entries")
    print("| DELETE's share | time |")
    print("|---|---|")
    print(f"| inline `delete_history` (before) | {inline:.1f} s |")
    print(f"| `request_history_purge` (now) | {queued * 1000:.0f} ms |")
    print(f"| background: ticks of {TICK_BUDGET} entries | {ticks} x {per_tick:.2f} s |")
    print(f"\nOne history write ({args.writes} writes)")
    print("| write | p50 ms | p95 ms |")
    print("|---|---|---|")
    for name, (p50, p95) in (
        ("add_history under the cap", under),
        ("add_history at the cap", at_cap),
        ("raw create_entity (baseline)", raw),
    ):
        print(f"| {name} | {p50:.1f} | {p95:.1f} |")


if __name__ == "__main__":
    main()
