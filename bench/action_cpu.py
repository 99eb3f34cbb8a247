"""What the HTTP action's one call costs in CPU, and what a request costs under it.

    .venv/bin/python bench/action_cpu.py [ROOT]

Why: an occurrence's own CPU budget is 10 ms, and the HTTP action's call was its largest
part (docs/cost.md, "The HTTP action without `requests` (ninth step)"). Against a local
target in another process (bench/http_target.py: its CPU is not this one's), a POST of a
small body through each client below: 20 calls to warm up, then 200 timed by this process's
CPU clock, three rounds; printed, the median CPU microseconds per call.

- `ours`: `scheduler_lib.actions.http.execute` of ROOT (default: this repository; give
  another tree, e.g. the main worktree, to compare two versions in the same run);
- `requests new session`, `requests kept`: a plain `requests` Session, new per call or kept;
- `http.client new conn`: a new `http.client` connection per call: the floor.
"""

from __future__ import annotations

import http.client
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]


def main() -> None:
    import requests
    from http_target import Target

    from scheduler_lib.actions import ExecutionContext
    from scheduler_lib.actions import http as action
    from scheduler_lib.actions.redaction import Redactor
    from scheduler_lib.config import Settings

    target = Target()
    url = target.url
    settings = Settings(storage_connection_string="UseDevelopmentStorage=true")
    context = ExecutionContext("j", "c", datetime.now(UTC), "tag")
    job = {"type": "Http", "request": {"uri": url, "method": "POST", "body": "hello"}}
    kept = requests.Session()
    parts = urlsplit(url)

    def ours() -> None:
        outcome = action.execute(job, context, settings, redactor=Redactor())
        assert outcome.succeeded, outcome

    def requests_new() -> None:
        with requests.Session() as session:
            _ = session.post(url, data=b"hello", headers=context.identifiers()).content

    def requests_kept() -> None:
        _ = kept.post(url, data=b"hello", headers=context.identifiers()).content

    def bare_new() -> None:
        connection = http.client.HTTPConnection(parts.hostname or "", parts.port)
        connection.request("POST", parts.path or "/", b"hello", context.identifiers())
        connection.getresponse().read()
        connection.close()

    clients: list[tuple[str, Callable[[], None]]] = [
        ("ours", ours),
        ("requests new session", requests_new),
        ("requests kept", requests_kept),
        ("http.client new conn", bare_new),
    ]
    print(f"ROOT {ROOT}")
    for name, call in clients:
        rounds = []
        for _ in range(3):
            for _ in range(20):
                call()
            started = time.process_time()
            for _ in range(200):
                call()
            rounds.append((time.process_time() - started) / 200 * 1e6)
        print(f"{name:25s} {statistics.median(rounds):8.0f} µs")
    target.stop()


if __name__ == "__main__":
    main()
