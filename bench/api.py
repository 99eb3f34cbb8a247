"""Benchmark of the REST API against a local Azurite: what the API adds to storage.

    .venv/bin/python bench/api.py [--requests 300] [--threads 4]

Serves `create_app` under uvicorn on a free port (as in the tests) and measures, with one
keep-alive HTTP client per thread:

- GET job: one Table get_entity behind it. Baseline: a raw azure-data-tables `get_entity`
  of the same job entity.
- PUT job (an update of an existing job with an unchanged schedule and a Basic password
  that is carried over): reads the job and its collection, validates, checks quotas
  against the schedule's next 50 executions, writes the job and its due-index row.
  Baseline: a raw `upsert_entity` of the same entity.

Each is run sequentially (p50/p95 latency, requests/s = 1/mean) and then with `--threads`
concurrent clients (aggregate requests/s). Ratios are API over its baseline, same run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx
import uvicorn
from azure.data.tables import UpdateMode

from devtools.azurite import free_port, start_azurite
from scheduler_lib.api import create_app
from scheduler_lib.config import Settings
from scheduler_lib.domain.keys import collection_key
from scheduler_lib.store.tables import TableStore

SUB, RG, COLL, JOB = "00000000-0000-0000-0000-00000000b001", "bench", "coll", "job"
BASE = f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler/jobCollections"
JOB_BODY = {
    "properties": {
        "startTime": "2026-01-01T00:00:00Z",
        "recurrence": {"frequency": "Hour", "interval": 1},
        "action": {
            "type": "Http",
            "request": {
                "uri": "https://example.com/hook",
                "method": "POST",
                "body": "hello",
                "headers": {"Content-Type": "text/plain"},
                "authentication": {"type": "Basic", "username": "bench", "password": "pw"},
            },
            "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 3},
        },
    }
}


def measure(call: Callable[[], object], count: int) -> list[float]:
    for _ in range(min(20, count)):  # warm-up: connections, caches
        call()
    times = []
    for _ in range(count):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return times


def concurrent_rate(
    make_call: Callable[[], Callable[[], object]], count: int, threads: int
) -> float:
    calls = [make_call() for _ in range(threads)]
    per_thread = count // threads
    start = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda call: [call() for _ in range(per_thread)], calls))
    return per_thread * threads / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()

    azurite = start_azurite()
    try:
        settings = Settings(
            storage_connection_string=azurite.connection_string,
            api_keys=("bench-key",),
            storage_prefix="bench",
        )
        now = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
        port = free_port()
        server = uvicorn.Server(
            uvicorn.Config(
                create_app(settings, clock=lambda: now),
                host="127.0.0.1",
                port=port,
                log_level="warning",
                access_log=False,
                lifespan="off",
            )
        )
        threading.Thread(target=server.run, daemon=True).start()
        while not server.started:
            time.sleep(0.01)
        api = f"http://127.0.0.1:{port}/api"
        headers = {"Authorization": "Bearer bench-key"}
        job_url = f"{BASE}/{COLL}/jobs/{JOB}?api-version=2016-03-01"

        def client() -> httpx.Client:
            return httpx.Client(base_url=api, headers=headers, timeout=30)

        setup = client()
        setup.put(
            f"{BASE}/{COLL}", json={"location": "westus", "properties": {}}
        ).raise_for_status()
        setup.put(job_url, json=JOB_BODY).raise_for_status()

        table = TableStore(settings).table("Jobs")
        entity = dict(table.get_entity(collection_key(SUB, RG, COLL), JOB))

        def raw_get() -> object:
            return table.get_entity(collection_key(SUB, RG, COLL), JOB)

        def raw_upsert() -> object:
            return table.upsert_entity(entity, mode=UpdateMode.REPLACE)

        def api_get_factory() -> Callable[[], object]:
            http = client()
            return lambda: http.get(job_url).raise_for_status()

        put_urls = iter(job_url.replace("/jobs/job?", f"/jobs/job{i}?") for i in range(64))

        def api_put_factory() -> Callable[[], object]:
            # One job per client: concurrent writers of *different* jobs (writers of one job
            # serialize on its ETag by design, see service/concurrency.retrying).
            http, url = client(), next(put_urls)
            return lambda: http.put(url, json=JOB_BODY).raise_for_status()

        def raw_factory(call: Callable[[], object]) -> Callable[[], Callable[[], object]]:
            # azure-data-tables clients are thread-safe; one per thread like the API's.
            def make() -> Callable[[], object]:
                own = TableStore(settings).table("Jobs")
                key = collection_key(SUB, RG, COLL)
                if call is raw_get:
                    return lambda: own.get_entity(key, JOB)
                return lambda: own.upsert_entity(entity, mode=UpdateMode.REPLACE)

            return make

        rows = []
        for label, baseline, factory in (
            ("GET job", raw_get, api_get_factory),
            ("PUT job", raw_upsert, api_put_factory),
        ):
            base_times = measure(baseline, args.requests)
            api_times = measure(factory(), args.requests)
            base_rate = concurrent_rate(raw_factory(baseline), args.requests, args.threads)
            api_rate = concurrent_rate(factory, args.requests, args.threads)
            rows.append((label, "baseline (raw tables)", base_times, base_rate, None))
            rows.append((label, "API (HTTP)", api_times, api_rate, base_times))

        print(f"{args.requests} requests each, sequential; then {args.threads} threads")
        header = (
            f"{'operation':<9} {'path':<22} {'p50 ms':>8} {'p95 ms':>8} {'req/s':>8} "
            f"{f'req/s x{args.threads}':>10} {'p50 vs base':>12}"
        )
        print(header)
        print("-" * len(header))
        for label, path, times, rate, base in rows:
            p50 = statistics.median(times) * 1000
            p95 = statistics.quantiles(times, n=20)[18] * 1000
            ratio = f"{p50 / (statistics.median(base) * 1000):.2f}x" if base else "1.00x"
            print(
                f"{label:<9} {path:<22} {p50:>8.2f} {p95:>8.2f} {1 / statistics.mean(times):>8.0f} "
                f"{rate:>10.0f} {ratio:>12}"
            )
        server.should_exit = True
    finally:
        azurite.stop()


if __name__ == "__main__":
    main()
