"""Render times of the dashboard's pages against a local Azurite: a collection holding 1,000
jobs, and a job with 1,000 history entries (the most a job keeps).

    .venv/bin/python bench/dashboard.py [--runs 15]

The app is served by uvicorn on a free port (the tests' own `serve`), and each page is
fetched over HTTP with a signed-in session, `--runs` times after one warm-up; the table
shows the median and the slowest run, and the page's size. A collection page shows 100 jobs
(one history read per job, 8 at a time, for the last run and the sparkline); the search page
reads all 1,000 jobs; the timeline enumerates the next 24 hours of every enabled job; the
job page reads its 1,000 entries once (the table shows the newest 100, the chart all of
them).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from devtools.azurite import start_azurite
from scheduler_lib.config import Settings
from scheduler_lib.runtime import create_web_app
from scheduler_lib.store import get_job
from scheduler_lib.store.history import TABLE as HISTORY
from scheduler_lib.store.tables import TableStore
from tests.support.api_server import serve

SUB, RG, COLL = "bench", "rg", "big"
COLLECTION = (
    f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler/jobCollections/{COLL}"
)
NOW = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
JOBS = 1000
ENTRIES = 1000


def _job(index: int) -> dict:
    """Jobs as people write them: a few schedules, most at a round hour (a herd)."""
    recurrences = [
        {"frequency": "Day", "schedule": {"hours": [9], "minutes": [0]}},
        {"frequency": "Hour", "interval": 1},
        {"frequency": "Week", "schedule": {"weekDays": ["Monday", "Friday"], "hours": [7]},
         "timeZone": "W. Europe Standard Time"},
        {"frequency": "Minute", "interval": 15},
    ]  # fmt: skip
    return {"properties": {
        "startTime": "2026-01-01T00:00:00Z",
        "action": {"type": "Http", "request": {"method": "POST", "uri": "http://127.0.0.1:9/hook",
                                               "body": "{}"}},
        "recurrence": recurrences[index % len(recurrences)]}}  # fmt: skip


def _fill_history(store: TableStore, key: str) -> None:
    """1,000 entries, one a minute back from NOW, a few failed (setup, not measured)."""
    table = store.table(HISTORY)
    rows = []
    for i in range(ENTRIES):
        expected = NOW - timedelta(minutes=i + 1)
        status = "Failed" if i % 17 == 0 else "Completed"
        rows.append({
            "PartitionKey": key, "RowKey": f"{i:017d}-bench",
            "StartTime": expected + timedelta(seconds=(i % 7) * 0.3),
            "EndTime": expected + timedelta(seconds=(i % 7) * 0.3 + 0.2 + (i % 5) * 0.1),
            "ExpectedExecutionTime": expected, "ActionName": "MainAction", "Status": status,
            "Message": f"Http Action - Response from host '127.0.0.1': "
                       f"'{500 if status == 'Failed' else 200}' Response Headers: "
                       "Content-Type: text/plain Body: " + "x" * 120,
            "RetryCount": 0, "RepeatCount": i + 1})  # fmt: skip
    for i in range(0, len(rows), 100):
        table.submit_transaction([("create", row) for row in rows[i : i + 100]])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    azurite = start_azurite()
    with ExitStack() as stack:
        stack.callback(azurite.stop)
        settings = Settings(
            storage_connection_string=azurite.connection_string,
            api_keys=("bench-key",),
            storage_prefix="dash",
        )
        server = stack.enter_context(serve(create_web_app(settings, clock=lambda: NOW)))
        base = server.base_url
        api = httpx.Client(base_url=base + "/api", timeout=60,
                           headers={"Authorization": "Bearer bench-key"},
                           params={"api-version": "2016-03-01"})  # fmt: skip
        api.put(COLLECTION, json={"location": "local",
                                  "properties": {"sku": {"name": "P20Premium"}}}
                ).raise_for_status()  # fmt: skip
        started = time.perf_counter()
        with ThreadPoolExecutor(8) as pool:
            list(
                pool.map(
                    lambda i: api.put(
                        f"{COLLECTION}/jobs/job-{i:04d}", json=_job(i)
                    ).raise_for_status(),
                    range(JOBS),
                )
            )
        store = TableStore(settings)
        _fill_history(store, get_job(store, SUB, RG, COLL, "job-0000").history_key)
        print(f"setup: {JOBS} jobs and {ENTRIES} history entries in "
              f"{time.perf_counter() - started:.0f} s")  # fmt: skip

        browser = httpx.Client(base_url=base, timeout=60, headers={"Sec-Fetch-Site": "same-origin"})
        browser.post("/api/ui/signin", data={"key": "bench-key"})
        ui = f"/api/ui/c/{SUB}/{RG}/{COLL}"
        pages = [
            ("collection, first 100 of 1,000 jobs", ui),
            ("collection, next page", None),
            ("collection, search over 1,000 jobs", ui + "?q=job-09"),
            ("timeline 24 h, 1,000 jobs", ui + "/timeline"),
            ("timeline 7 days, 1,000 jobs", ui + "/timeline?span=7d"),
            ("job with 1,000 history entries", ui + "/jobs/job-0000"),
            ("overview", "/api/ui/"),
        ]
        first = browser.get(ui).text
        marker = 'rel="next" href="'
        pages[1] = (pages[1][0], first.split(marker)[1].split('"')[0].replace("&amp;", "&"))
        header = f"{'page':<38} {'median ms':>10} {'max ms':>8} {'KB':>6}"
        print(f"{args.runs} runs each after one warm-up, sequential")
        print(header)
        print("-" * len(header))
        for label, path in pages:
            response = browser.get(path)
            response.raise_for_status()
            times = []
            for _ in range(args.runs):
                t = time.perf_counter()
                browser.get(path).raise_for_status()
                times.append((time.perf_counter() - t) * 1000)
            print(f"{label:<38} {statistics.median(times):>10.0f} {max(times):>8.0f} "
                  f"{len(response.content) / 1024:>6.0f}")  # fmt: skip


if __name__ == "__main__":
    main()
