"""Client CPU per storage request: the same table and queue calls through the scheduler's
storage clients, timed by this process's CPU clock (what the host pays for each request,
without the rest of an occurrence around it).

    .venv/bin/python bench/transport.py [--requests 2000] [--profile FILE]

Against a fresh Azurite: a point read (found), a point read (missing: the SDK raises), an
insert-or-replace, a two-entity transaction, a queue send and a queue delete, in turns.
Prints CPU microseconds per request of this process (Azurite's are not counted), and the
wall time. Run it from two checkouts one after the other to compare a transport change
(`--root`); the machine's noise moves it by ~10 %.
"""

from __future__ import annotations

import argparse
import cProfile
import sys
import time
import uuid
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

        def one_round(i: int) -> None:
            table.get_entity("p", "found")
            with suppress(ResourceNotFoundError):
                table.get_entity("p", "missing")
            table.upsert_entity({"PartitionKey": "p", "RowKey": "found", "N": i})
            table.submit_transaction(
                [("upsert", {"PartitionKey": "q", "RowKey": f"a{i}"}),
                 ("upsert", {"PartitionKey": "q", "RowKey": f"b{i}"})]
            )  # fmt: skip
            sent = queue.send_body("{}", delay_seconds=60)
            queue.discard(sent)

        for i in range(20):  # connections, imports, caches
            one_round(i)
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
        n = rounds * 6
        print(f"{args.root}: {n} requests, client CPU {cpu / n * 1e6:.0f} µs per request, "
              f"wall {wall / n * 1e3:.2f} ms per request")  # fmt: skip
    finally:
        azurite.stop()


if __name__ == "__main__":
    main()
