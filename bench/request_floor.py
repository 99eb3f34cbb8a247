"""What one storage request costs in client CPU through the storage SDK, and under it.

    .venv/bin/python bench/request_floor.py [--requests 600] [--rounds 5]

Why: an occurrence's CPU follows its storage requests (docs/cost.md), so the question is
how much of a request's CPU is the request itself and how much the SDK's machinery around
it. Against a fresh Azurite, the same point read (a 2 KB entity) four ways, in turns, each
round timing `--requests` reads by this process's CPU clock:

- `sdk`: the project's own table client (`TableStore`: azure-data-tables on azure-core, on
  `storage_account`'s trimmed `requests` session), what the executor and dispatcher use;
- `sdk, stock`: azure-data-tables as it comes (`TableServiceClient.from_connection_string`);
- `sdk, async`: the SDK's `aio` client on aiohttp, one read at a time and 16 at once
  (only where aiohttp is installed: it is not one of the project's dependencies);
- `bare`: `http.client` on one kept-alive connection, signed with SharedKeyLite as the
  Table service documents it: the floor (what any client must do: sign, send, parse).

Printed: the median over the rounds of CPU microseconds per read, and its ratio to the
project's client (`sdk`), measured in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import hmac
import http.client
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from email.utils import formatdate
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from azure.data.tables import TableServiceClient  # noqa: E402

from devtools.azurite import start_azurite  # noqa: E402
from scheduler_lib.config import Settings  # noqa: E402
from scheduler_lib.store.tables import TableStore  # noqa: E402

PK, RK = "p", "r"


def cpu_per_call(call: Callable[[], object], n: int) -> float:
    """CPU microseconds per call of `call`, over `n` calls."""
    started = time.process_time()
    for _ in range(n):
        call()
    return (time.process_time() - started) / n * 1e6


def bare_reader(connection_string: str, port: int, table: str) -> Callable[[], object]:
    """A point read by `http.client`, signed with SharedKeyLite (the Table service's
    documented scheme: the date and the canonical resource, HMAC-SHA256 with the key)."""
    parts = dict(p.split("=", 1) for p in connection_string.split(";") if "=" in p)
    account, key = parts["AccountName"], base64.b64decode(parts["AccountKey"])
    connection = http.client.HTTPConnection("127.0.0.1", port)
    resource = f"{table}(PartitionKey='{PK}',RowKey='{RK}')"

    def read() -> bytes:
        date = formatdate(usegmt=True)
        signed = f"{date}\n/{account}/{account}/{resource}".encode()
        signature = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
        connection.request("GET", f"/{account}/{resource}", headers={
            "x-ms-date": date, "x-ms-version": "2019-02-02",
            "Accept": "application/json;odata=minimalmetadata",
            "Authorization": f"SharedKeyLite {account}:{signature}",
        })  # fmt: skip
        answer = connection.getresponse()
        body = answer.read()
        if answer.status != 200:
            raise RuntimeError(f"{answer.status}: {body[:200]!r}")
        return body

    return read


def async_rows(connection_string: str, table: str, n: int, rounds: int) -> dict[str, list[float]]:
    """CPU per read through the SDK's aio client: one at a time, and 16 at once."""
    from azure.data.tables.aio import TableServiceClient as AioService

    times: dict[str, list[float]] = {"sdk, async": [], "sdk, async, 16 at once": []}

    async def run() -> None:
        async with AioService.from_connection_string(connection_string) as service:
            client = service.get_table_client(table)
            for _ in range(20):
                await client.get_entity(PK, RK)
            for _ in range(rounds):
                started = time.process_time()
                for _ in range(n):
                    await client.get_entity(PK, RK)
                times["sdk, async"].append((time.process_time() - started) / n * 1e6)
                started = time.process_time()
                for _ in range(n // 16):
                    await asyncio.gather(*(client.get_entity(PK, RK) for _ in range(16)))
                spent = time.process_time() - started
                times["sdk, async, 16 at once"].append(spent / (n // 16 * 16) * 1e6)

    asyncio.run(run())
    return times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    azurite = start_azurite()
    try:
        connection = azurite.connection_string
        prefix = "f" + uuid.uuid4().hex[:8]
        settings = Settings(storage_connection_string=connection, storage_prefix=prefix)
        store = TableStore(settings)
        store.ensure_tables()
        ours = store.table("JobHistory")
        table = ours.table_name
        ours.upsert_entity({"PartitionKey": PK, "RowKey": RK, "N": 0, "Body": "x" * 2000})
        stock = TableServiceClient.from_connection_string(connection).get_table_client(table)
        readers: dict[str, Callable[[], object]] = {
            "sdk": lambda: ours.get_entity(PK, RK),
            "sdk, stock": lambda: stock.get_entity(PK, RK),
            "bare": bare_reader(connection, azurite.table_port, table),
        }
        times: dict[str, list[float]] = {name: [] for name in readers}
        for read in readers.values():
            cpu_per_call(read, 20)  # connections, imports, caches
        for _ in range(args.rounds):
            for name, read in readers.items():
                times[name].append(cpu_per_call(read, args.requests))
        try:
            times |= async_rows(connection, table, args.requests, args.rounds)
        except ImportError:
            print("(aiohttp is not installed: no async rows)")
    finally:
        azurite.stop()
    base = statistics.median(times["sdk"])
    print(f"\n{args.requests} point reads of a 2 KB entity per round, {args.rounds} rounds\n")
    print("| client | CPU µs per read (median) | against `sdk` |")
    print("|---|---:|---:|")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"| {name} | {median:,.0f} | {median / base:.2f} |")


if __name__ == "__main__":
    main()
