"""Client CPU per storage request: the same table and queue calls through the scheduler's
storage clients, timed by this process's CPU clock (what the host pays for each request,
without the rest of an occurrence around it).

    .venv/bin/python bench/transport.py [--requests 2000] [--profile FILE]

Against a fresh Azurite: a point read (found), a point read (missing: the SDK raises), an
insert-or-replace, a two-entity transaction, a queue send and a queue delete, in turns (and a
transaction of 50 entities, timed on its own). Prints CPU microseconds per request of this
process (Azurite's are not counted) over the first six, the wall time, and a row per kind
of request: its CPU, and that in point reads (found). Run it from two checkouts one after
the other to compare a transport change (`--root`); the machine's noise moves it by ~10 %.
"""

from __future__ import annotations

import argparse
import cProfile
import sys
import time
import uuid
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--profile", help="write a cProfile of the timed loop here")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(args.root.resolve()))

    from azure.core.exceptions import ResourceNotFoundError

    from devtools.azurite import start_azurite
    from scheduler_lib.config import Settings
    from scheduler_lib.store.execution_queue import ExecutionQueue
    from scheduler_lib.store.tables import TableStore

    azurite = start_azurite()
    try:
        settings = Settings(
            storage_connection_string=azurite.connection_string,
            storage_prefix="b" + uuid.uuid4().hex[:8],
        )
        store = TableStore(settings)
        store.ensure_tables()
        queue = ExecutionQueue(settings).ready()
        table = store.table("JobHistory")
        table.upsert_entity({"PartitionKey": "p", "RowKey": "found", "N": 0})

        def transaction(partition: str, size: int) -> Callable[[int], object]:
            return lambda i: table.submit_transaction(
                [("upsert", {"PartitionKey": partition, "RowKey": f"{k}", "N": i})
                 for k in range(size)]
            )  # fmt: skip

        def read_missing(i: int) -> None:
            with suppress(ResourceNotFoundError):
                table.get_entity("p", "missing")

        def upsert(i: int) -> None:
            table.upsert_entity({"PartitionKey": "p", "RowKey": "found", "N": i})

        def queue_round_trip(i: int) -> None:
            queue.discard(queue.send_body("{}", delay_seconds=60))  # two requests

        kinds: dict[str, tuple[int, Callable[[int], object]]] = {
            "point read (found)": (1, lambda i: table.get_entity("p", "found")),
            "point read (missing)": (1, read_missing),
            "insert-or-replace": (1, upsert),
            "transaction of 2": (1, transaction("q", 2)),
            "queue send + delete": (2, queue_round_trip),
            "transaction of 50": (1, transaction("r", 50)),
        }
        spent = dict.fromkeys(kinds, 0.0)

        def one_round(i: int) -> None:
            for name, (_, request) in kinds.items():
                start = time.process_time()
                request(i)
                spent[name] += time.process_time() - start

        for i in range(20):  # connections, imports, caches
            one_round(i)
        spent = dict.fromkeys(kinds, 0.0)
        rounds = max(1, args.requests // 6)
        profile = cProfile.Profile(time.process_time) if args.profile else None
        cpu, wall = time.process_time(), time.monotonic()
        if profile:
            profile.enable()
        for i in range(rounds):
            one_round(i)
        if profile:
            profile.disable()
            profile.dump_stats(args.profile)
        cpu, wall = time.process_time() - cpu, time.monotonic() - wall
        six = sum(t for name, t in spent.items() if name != "transaction of 50")
        n = rounds * 6
        print(f"{args.root}: {n} requests, client CPU {six / n * 1e6:.0f} µs per request, "
              f"wall {wall / n * 1e3:.2f} ms per round's request")  # fmt: skip
        read = spent["point read (found)"]
        for name, (requests, _) in kinds.items():
            each = spent[name] / rounds / requests
            print(f"  {name:22} {each * 1e6:7.0f} µs per request = "
                  f"{spent[name] / read / requests:5.2f} point reads")  # fmt: skip
    finally:
        azurite.stop()


if __name__ == "__main__":
    main()
