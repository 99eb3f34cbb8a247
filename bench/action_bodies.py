"""Memory an HTTP action costs when its target answers with a huge body.

    .venv/bin/python bench/action_bodies.py [--mib 200]

The target (tests/support/large_body_target.py) runs in a child process and answers every
request with a generated body of `--mib` MiB; this process runs one Http action per case
and prints its peak resident set size (VmHWM) before and after, and the body bytes the
target got to write before the executor hung up. Each case runs in a fresh process, so each
peak is that case's own.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import scheduler_lib.actions.http  # noqa: F401  (imported before measuring, not during)
from scheduler_lib.actions import ExecutionContext, run_action
from scheduler_lib.config import Settings
from tests.support.large_body_target import LargeBodyTarget

CONTEXT = ExecutionContext("job", "collection", datetime(2024, 3, 1, tzinfo=UTC), "tag")


def peak_rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def serve(size: int, status: int, headers: dict[str, str], conn: object) -> None:
    with LargeBodyTarget(size, status, headers) as target:
        conn.send(target.url)  # type: ignore[attr-defined]
        target.done.wait(120)
        conn.send(target.bytes_written)  # type: ignore[attr-defined]


def one_case(label: str, size: int, status: int, headers: dict[str, str]) -> None:
    parent, child = multiprocessing.Pipe()
    proc = multiprocessing.Process(target=serve, args=(size, status, headers, child))
    proc.start()
    url = parent.recv()
    before = peak_rss_mib()
    run_action({"type": "Http", "request": {"uri": url, "method": "GET"}}, CONTEXT, Settings())
    after = peak_rss_mib()
    sent = parent.recv()
    proc.join()
    print(
        f"| {label} | {before:.0f} MiB | {after:.0f} MiB | {sent / 1048576:.1f} MiB |", flush=True
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=200)
    size = parser.parse_args().mib * 1024 * 1024
    print(f"| answer ({size >> 20} MiB body) | peak RSS before | peak RSS after | body sent |")
    print("|---|---|---|---|", flush=True)
    for label, status, headers in (
        ("302 redirect", 302, {"Location": "http://127.0.0.1:9/"}),
        ("200", 200, {}),
    ):
        case = multiprocessing.Process(target=one_case, args=(label, size, status, headers))
        case.start()
        case.join()


if __name__ == "__main__":
    main()
