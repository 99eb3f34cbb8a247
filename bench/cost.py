"""CPU, storage calls and function invocations per occurrence, through the local host.

    .venv/bin/python bench/cost.py [--count 600] [--minutes 1] [--idle 60] [--root PATH]
                                   [--label NAME] [--env NAME=VALUE ...] [--profile FILE]

What an occurrence costs is what Azure bills for: CPU time (GB-s on Flex Consumption),
storage transactions and function executions. One run:

1. a fresh Azurite, an HTTP target in its own process, and the local host
   (`python -m devtools.devhost`, the same `Runtime` as function_app.py) in its own, with
   `SCHEDULER_BENCH_COUNT_CALLS` set so it counts its storage requests by stage and its
   invocations (`scheduler_lib/storage_calls.py`; production never sets it);
2. idle: `--idle` seconds with no job (one minute holds one dispatcher tick), CPU of the
   host and of Azurite (utime+stime of the process and its children, /proc/<pid>/stat), and
   the storage calls made meanwhile;
3. `--count` one-time HTTP jobs created through the API, due spread evenly over `--minutes`
   minutes (one by default; e.g. `--count 40 --minutes 4` for isolated occurrences;
   `--minutes 0`: all due at the same second, the minute's first) a few
   minutes ahead (as bench/lateness.py); the window opens 90 s before their first minute
   (`WINDOW_LEAD`: before the dispatcher's tick that sends them; the API's cost is not
   counted) and ends 5 s after the last action arrived: everything the dispatcher, the
   executor and the watchdog did for them falls in it. Until the eleventh step it opened
   as soon as the jobs were created, and the idle rate scaled to that longer window made
   the figure move by 40 % from run to run; the report still shows the host's CPU in that
   window, for comparing with those steps;
4. the bare work: the same number of HTTP POSTs to the target by a plain `requests` loop in
   a process of its own, its CPU time.

Printed: CPU ms per occurrence above idle (idle scaled to the window's length) for the host
and Azurite, next to the bare work's, with ratios; storage requests per occurrence, total
and per stage (`invocation entry: module [service method]`); invocations per occurrence and
the seconds they ran, and the host's active seconds (at least one invocation running: what
Flex Consumption bills GB-s for) per occurrence; lateness p50/p99. `--env` passes an app
setting to the host (e.g. `SCHEDULER_PRECISION=minute`). `--root` runs the host from
another checkout (compare in the same run of the machine); `--profile FILE` runs the host
under `devtools/thread_profile.py` (a CPU profile of every thread; its overhead inflates the
CPU numbers of that run).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from http_target import Target  # noqa: E402
from lateness import BASE, CREATE_RATE, KEY, PER_COLLECTION, iso, percentile  # noqa: E402
from proc_cpu import tree_cpu  # noqa: E402

from devtools.azurite import free_port, port_open, start_azurite  # noqa: E402
from devtools.local_run import LOCAL_SETTINGS  # noqa: E402
from scheduler_lib.storage_calls import COUNTING_CPU, LOCAL_HOST_CPU  # noqa: E402

#: The window opens this long before the first minute the jobs are due in: before the
#: dispatcher's tick a minute ahead (`dispatch.shard.LOOK_AHEAD`) that sends their first
#: occurrences, with half a minute to spare for a late tick. Opening it as soon as the jobs
#: were created (up to `--margin` seconds earlier) only adds idle time, and the error of
#: the idle rate scaled to it: 200 s of a host idling at ~12 ms a second is ~8 ms per
#: occurrence of 300 taken off, nearly as much as what is measured.
WINDOW_LEAD = timedelta(seconds=90)

BARE_WORK = """
import sys, time, requests
url, n = sys.argv[1], int(sys.argv[2])
session = requests.Session()
start = time.process_time()
for i in range(n):
    session.post(url, data=b"", headers={"x-ms-scheduler-expected-execution-time":
        "2000-01-01T00:00:00+00:00", "x-ms-execution-tag": f"bare{i}"}).raise_for_status()
print(time.process_time() - start)
"""


class Probe:
    """CPU of the host and Azurite, and the host's counts, at one moment."""

    def __init__(self, host: int, azurite: int, counts: Path) -> None:
        self.host, self.azurite, self.counts = host, azurite, counts

    def take(self) -> tuple[float, float, Counter[str], float]:
        time.sleep(1.2)  # the counts file is rewritten every second
        counts: Counter[str] = Counter(json.loads(self.counts.read_text()))
        return tree_cpu(self.host), tree_cpu(self.azurite), counts, time.monotonic()


def diff(after: tuple, before: tuple) -> dict:  # type: ignore[type-arg]
    return {
        "host": after[0] - before[0],
        "azurite": after[1] - before[1],
        "counts": after[2] - before[2],
        "seconds": after[3] - before[3],
    }


def run(  # type: ignore[type-arg]
    count: int,
    root: Path,
    idle_seconds: float,
    profile: str | None,
    margin: float,
    *,
    minutes: int = 1,
    settings: dict[str, str] | None = None,
) -> dict:
    azurite, target = start_azurite(), Target()
    port = free_port()
    counts = Path(tempfile.mkdtemp(prefix="cost-")) / "counts.json"
    env = {
        **os.environ,
        **LOCAL_SETTINGS,
        "AzureWebJobsStorage": azurite.connection_string,
        "SCHEDULER_API_KEYS": KEY,
        "SCHEDULER_BENCH_COUNT_CALLS": str(counts),
        "PYTHONPATH": str(root),
        **(settings or {}),
    }
    if profile:
        env["SCHEDULER_BENCH_PROFILE"] = profile
    # Its own log per run: runs side by side (base and change) must not write one file.
    log_path = counts.parent / "host.log"
    print(f"host log: {log_path}", file=sys.stderr)
    log = open(log_path, "wb")  # noqa: SIM115  # closed below
    host = subprocess.Popen(
        [sys.executable, "-m", "devtools.devhost", "--port", str(port)],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (port_open(port) and counts.exists()):
            if time.monotonic() > deadline or host.poll() is not None:
                raise RuntimeError("the host did not start")
            time.sleep(0.1)
        probe = Probe(host.pid, azurite.process.pid, counts)
        time.sleep(3)  # start-up settles (tables, queues, the missed-tick check)
        before = probe.take()
        time.sleep(idle_seconds)
        idle = diff(probe.take(), before)
        api = httpx.Client(
            base_url=f"http://127.0.0.1:{port}/api{BASE}",
            headers={"Authorization": f"Bearer {KEY}"},
            params={"api-version": "2016-03-01"},
            timeout=60,
        )
        ahead = timedelta(seconds=count / CREATE_RATE + margin)
        minute = (datetime.now(UTC) + ahead).replace(second=0, microsecond=0) + timedelta(minutes=1)
        for c in range((count + PER_COLLECTION - 1) // PER_COLLECTION):
            body = {"location": "local", "properties": {"sku": {"name": "P20Premium"}}}
            api.put(f"/c{c}", json=body).raise_for_status()
        create = _creator(api, target.url, minute, count, minutes)
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(create, range(count)))
        if datetime.now(UTC) > minute - timedelta(seconds=60):
            raise SystemExit("creating the jobs took too long to place them ahead; rerun")
        created = probe.take()
        opens = (minute - WINDOW_LEAD - datetime.now(UTC)).total_seconds()
        time.sleep(max(0.0, opens))  # nothing is done for the jobs before
        before = probe.take()
        end = minute + timedelta(minutes=max(minutes, 1) - 1, seconds=90)
        while datetime.now(UTC) < end and target.count() < count:
            time.sleep(0.5)
        time.sleep(5)  # a doubled delivery, a watchdog's check, a finish still in hand
        after = probe.take()
        work, from_created = diff(after, before), diff(after, created)
        tags, lateness = target.tags(), target.take()
        bare = _bare_work(target.url, count)
    finally:
        host.terminate()
        host.wait(timeout=120)
        log.close()
        target.stop()
        azurite.stop()
    return {
        "count": count, "idle": idle, "work": work, "from_created": from_created, "bare": bare,
        "received": len(lateness), "missing": count - len(set(tags)),
        "doubled": sum(n - 1 for n in Counter(tags).values()),
        "p50": percentile(lateness, 0.5) if lateness else float("nan"),
        "p99": percentile(lateness, 0.99) if lateness else float("nan"),
    }  # fmt: skip


def _creator(
    api: httpx.Client, url: str, minute: datetime, count: int, minutes: int
) -> Callable[[int], None]:
    def create(i: int) -> None:
        start = minute + timedelta(seconds=60 * minutes * i / count)
        action = {"type": "Http", "request": {"method": "POST", "uri": url}}
        body = {"properties": {"startTime": iso(start), "action": action}}
        for attempt in range(5):  # storage busy under the load: the API answers 503
            answer = api.put(f"/c{i // PER_COLLECTION}/jobs/j{i:05d}", json=body)
            if answer.status_code != 503:
                break
            time.sleep(1 + attempt)
        answer.raise_for_status()

    return create


def _bare_work(url: str, count: int) -> float:
    """CPU seconds a plain `requests` loop takes for `count` POSTs to the target."""
    out = subprocess.run(
        [sys.executable, "-c", BARE_WORK, url, str(count)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return float(out.stdout.strip())


def storage_requests(counts: Mapping[str, float]) -> dict[str, float]:
    """The storage requests among the host's counts (`storage_calls`): not its invocations
    (`invocation: ...`) nor the milliseconds they ran (`seconds: ...`), which once made the
    idle line's "storage requests" tens of thousands."""
    return {
        k: v for k, v in counts.items() if not k.startswith(("invocation", "seconds", "cpu_us"))
    }


def report(r: dict, label: str) -> None:  # type: ignore[type-arg]
    n, idle, work = r["count"], r["idle"], r["work"]
    scale = work["seconds"] / idle["seconds"]
    host = (work["host"] - idle["host"] * scale) / n * 1000
    azurite = (work["azurite"] - idle["azurite"] * scale) / n * 1000
    bare = r["bare"] / n * 1000
    calls = work["counts"]
    # The local host's own queue work (its polls and settling: the Functions host's job in
    # Azure), thread CPU counted by devhost (`storage_calls.local_host_work`), above idle.
    own = LOCAL_HOST_CPU
    local = (calls.get(own, 0) - idle["counts"].get(own, 0) * scale) / n / 1000
    # What counting the app's requests cost (`storage_calls.COUNTING_CPU`): this benchmark's.
    counting = (calls.get(COUNTING_CPU, 0) - idle["counts"].get(COUNTING_CPU, 0) * scale) / n / 1000
    idle_calls = Counter({k: v * scale for k, v in idle["counts"].items()})
    storage = storage_requests(calls)
    invocations = {k: v for k, v in calls.items() if k.startswith("invocation")}
    seconds = {k: v / 1000 for k, v in calls.items() if k.startswith("seconds")}
    print(f"\n## {label}: {n} occurrences in one minute, window {work['seconds']:.0f} s")
    print(f"received {r['received']}, missing {r['missing']}, doubled {r['doubled']}, "
          f"lateness p50 {r['p50']:.2f} s, p99 {r['p99']:.2f} s")  # fmt: skip
    print(f"idle over {idle['seconds']:.0f} s: host {idle['host'] * 1000:.0f} ms, "
          f"Azurite {idle['azurite'] * 1000:.0f} ms, "
          f"{sum(storage_requests(idle['counts']).values())} storage requests")  # fmt: skip
    print("\n| CPU per occurrence (above idle) | ms | × bare work |")
    print("|---|---:|---:|")
    for name, value in (("host (our processes)", host),
                        ("of which the local host's queue work", local),
                        ("of which this benchmark's counting of requests", counting),
                        ("the app's (host less those)", host - local - counting),
                        ("Azurite", azurite), ("bare work (requests loop)", bare)):  # fmt: skip
        print(f"| {name} | {value:.2f} | {value / bare:.1f} |")
    total = sum(storage.values())
    idle_storage = sum(storage_requests(idle_calls).values())
    print(f"\nstorage requests per occurrence: {total / n:.2f} "
          f"({(total - idle_storage) / n:.2f} above idle)")  # fmt: skip
    print("\n| stage (invocation: module [service method]) | per occurrence |")
    print("|---|---:|")
    for key, value in sorted(storage.items(), key=lambda kv: -kv[1]):
        if value / n >= 0.005:
            print(f"| {key} | {value / n:.3f} |")
    print("\n| invocations | per occurrence |")
    print("|---|---:|")
    for key, value in sorted(invocations.items(), key=lambda kv: -kv[1]):
        print(f"| {key.removeprefix('invocation: ')} | {value / n:.3f} |")
    print(f"| total | {sum(invocations.values()) / n:.3f} |")
    print("\n| seconds running | per occurrence |")
    print("|---|---:|")
    for key, value in sorted(seconds.items(), key=lambda kv: -kv[1]):
        print(f"| {key.removeprefix('seconds: ')} | {value / n:.3f} |")
    longer = r["from_created"]
    from_created = (longer["host"] - idle["host"] * longer["seconds"] / idle["seconds"]) / n * 1000
    print(
        f"\nhost CPU per occurrence in the window opened at the jobs' creation "
        f"({longer['seconds']:.0f} s, as until the eleventh step): {from_created:.2f} ms"
    )
    r["local_host_ms"], r["counting_ms"], r["from_created_ms"] = local, counting, from_created
    summary(r, host, azurite, bare, storage, invocations, seconds)


def summary(  # type: ignore[type-arg]
    r: dict,
    host: float,
    azurite: float,
    bare: float,
    storage: dict,
    invocations: dict,
    seconds: dict,
) -> None:
    """The issue's table in one place: CPU both sides, storage by stage, executions and
    active seconds, lateness (also kept in the JSON for comparing runs)."""
    n = r["count"]
    # The local host's polling loops stand for the Functions host's triggers: not counted.
    counted = {k: v for k, v in storage.items() if not k.split(":")[0].endswith("_loop")}
    table = sum(v for k, v in counted.items() if "[table" in k) / n
    queue = sum(v for k, v in counted.items() if "[queue" in k) / n
    stages: Counter[str] = Counter()
    for key, value in storage.items():
        stages[key.split(":")[0]] += value / n
    r["summary"] = {
        "host_ms": host, "local_host_ms": r["local_host_ms"], "counting_ms": r["counting_ms"],
        "app_ms": host - r["local_host_ms"] - r["counting_ms"],
        "host_ms_from_created": r["from_created_ms"],
        "azurite_ms": azurite, "bare_ms": bare, "table": table,
        "queue": queue, "executions": sum(invocations.values()) / n,
        "active_s": seconds.get("seconds: active", float("nan")) / n,
        "executor_s": seconds.get("seconds: scheduler-executions", float("nan")) / n,
        "p50": r["p50"], "p99": r["p99"], "stages": dict(stages),
    }  # fmt: skip
    print("\n| summary | per occurrence |")
    print("|---|---:|")
    for name, value in r["summary"].items():
        if name != "stages":
            print(f"| {name} | {value:.3f} |")
    for name, value in sorted(stages.items(), key=lambda kv: -kv[1]):
        print(f"| storage requests in {name} | {value:.2f} |")
    print(flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=600)
    parser.add_argument("--minutes", type=int, default=1,
                        help="spread the jobs over this many (0: all at one second)")  # fmt: skip
    parser.add_argument("--idle", type=float, default=60.0)
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help="an app setting for the host")  # fmt: skip
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--label", default="this tree")
    parser.add_argument("--profile", help="pstats file for a CPU profile of the host")
    parser.add_argument("--json", type=Path, help="also write the raw results here")
    parser.add_argument("--margin", type=float, default=100.0,
                        help="seconds added to the creation time when placing the minute ahead "
                             "(more on a loaded machine, or with --profile)")  # fmt: skip
    args = parser.parse_args(argv)
    print(f"[{datetime.now(UTC):%H:%M:%S}] {args.label} ({args.root}); load {os.getloadavg()}",
          file=sys.stderr)  # fmt: skip
    settings = dict(item.split("=", 1) for item in args.env)
    result = run(args.count, args.root.resolve(), args.idle, args.profile, args.margin,
                 minutes=args.minutes, settings=settings)  # fmt: skip
    report(result, args.label)
    print(f"load average after: {os.getloadavg()}")
    if args.json:
        result["idle"]["counts"] = dict(result["idle"]["counts"])
        for part in ("work", "from_created"):
            result[part]["counts"] = dict(result[part]["counts"])
        args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
