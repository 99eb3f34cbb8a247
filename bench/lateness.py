"""End-to-end lateness of action starts through the local host.

    .venv/bin/python bench/lateness.py [--counts 1000,2000,5000] [--dispatch-workers 2]
                                       [--root PATH] [--margin SECONDS] [--wait SECONDS]
                                       [--instances N]

For each count: a fresh Azurite, the local host (`python -m devtools.devhost`, the same
`Runtime` as function_app.py) in its own process, and an HTTP target in another that records
each request's arrival against its `x-ms-scheduler-expected-execution-time` header and its
`x-ms-execution-tag`. `count` one-time HTTP jobs are created through the API (collections of
1,000, P20Premium) with start times spread evenly over one minute a few minutes ahead, so the
host's ticks dispatch them (not the API's immediate dispatch). Printed: lateness p50, p99 and
max of the action starts, how many occurrences were missing, doubled or early, and the cores
the host and Azurite used from the minute's start to the last arrival (CPU seconds over wall
seconds, `/proc`): the local host is one Python process, so a host near 1 core is bound by
its CPU (the interpreter's lock), not by its executor slots or the queue. `--instances N`
runs N local hosts against the one Azurite, as a deployment the platform scaled out to N
instances (each one Python process, as a Flex Consumption instance runs one): the timer fires
in each (in Azure one instance holds it), which the dispatcher's shard leases make harmless;
the host cores are those of all of them together. `--wait`: how long after the minute's start
arrivals are waited for; later ones count as missing.

`--root` runs the host from another checkout of the project (e.g. `git archive main` unpacked
in a temporary directory) to compare with it in the same run on the same machine.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from http_target import Target  # noqa: E402
from proc_cpu import tree_cpu  # noqa: E402

from devtools.azurite import free_port, port_open, start_azurite  # noqa: E402
from devtools.local_run import LOCAL_SETTINGS  # noqa: E402

KEY = "bench-key"
BASE = "/subscriptions/bench/resourceGroups/bench/providers/Microsoft.Scheduler/jobCollections"
PER_COLLECTION = 1000  # P20Premium's job quota
CREATE_RATE = 25  # jobs/s the API is assumed to take at least, to place the minute ahead


def iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run(
    count: int,
    root: Path,
    dispatch_workers: int,
    margin: float = 90.0,
    wait: float = 90.0,
    instances: int = 1,
) -> dict[str, float]:
    azurite, target = start_azurite(), Target()
    env = {
        **os.environ,
        **LOCAL_SETTINGS,
        "AzureWebJobsStorage": azurite.connection_string,
        "SCHEDULER_API_KEYS": KEY,
        "SCHEDULER_DISPATCH_WORKERS": str(dispatch_workers),
        "PYTHONPATH": str(root),
    }
    log = open(f"/tmp/lateness-host-{count}.log", "wb")  # noqa: SIM115  # closed below
    ports = [free_port() for _ in range(instances)]
    command = [sys.executable, "-m", "devtools.devhost", "--port"]
    hosts = [
        subprocess.Popen(
            [*command, str(port)], cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT
        )
        for port in ports
    ]
    port = ports[0]  # the API of the first creates the jobs
    try:
        deadline = time.monotonic() + 60
        while not all(port_open(p) for p in ports):
            if time.monotonic() > deadline or any(h.poll() is not None for h in hosts):
                raise RuntimeError("a host did not start")
            time.sleep(0.1)
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

        def create(i: int) -> None:
            start = minute + timedelta(seconds=60 * i / count)
            action = {"type": "Http", "request": {"method": "POST", "uri": target.url}}
            body = {"properties": {"startTime": iso(start), "action": action}}
            for attempt in range(5):  # storage busy under the load: the API answers 503
                answer = api.put(f"/c{i // PER_COLLECTION}/jobs/j{i:05d}", json=body)
                if answer.status_code != 503:
                    break
                time.sleep(1 + attempt)
            answer.raise_for_status()

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(create, range(count)))
        if datetime.now(UTC) > minute - timedelta(seconds=60):
            raise SystemExit("creating the jobs took too long to place them ahead; rerun")
        while datetime.now(UTC) < minute:
            time.sleep(0.2)
        cpu_start = (hosts_cpu(hosts), tree_cpu(azurite.process.pid), time.monotonic())
        end = minute + timedelta(seconds=wait)
        while datetime.now(UTC) < end and target.count() < count:
            time.sleep(0.5)
        wall = time.monotonic() - cpu_start[2]
        host_cores = (hosts_cpu(hosts) - cpu_start[0]) / wall
        azurite_cores = (tree_cpu(azurite.process.pid) - cpu_start[1]) / wall
        time.sleep(3)  # a doubled delivery would arrive within seconds
        tags, lateness = target.tags(), target.take()
    finally:
        for host in hosts:
            host.terminate()
        for host in hosts:
            host.wait(timeout=60)
        log.close()
        target.stop()
        azurite.stop()
    doubled = sum(n - 1 for n in Counter(tags).values())
    return {
        "count": count,
        "received": len(lateness),
        "p50": percentile(lateness, 0.5) if lateness else float("nan"),
        "p99": percentile(lateness, 0.99) if lateness else float("nan"),
        "max": max(lateness, default=float("nan")),
        "missing": count - len(set(tags)),
        "doubled": doubled,
        "early": sum(1 for v in lateness if v < 0),
        "host_cores": host_cores,
        "azurite_cores": azurite_cores,
    }


def hosts_cpu(hosts: list[subprocess.Popen[bytes]]) -> float:
    """CPU seconds of every host process (and its children) together."""
    return sum(tree_cpu(host.pid) for host in hosts)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--counts", default="1000,2000,5000")
    parser.add_argument("--dispatch-workers", type=int, default=2)
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--label", default="this tree")
    parser.add_argument(
        "--margin",
        type=float,
        default=90.0,
        help="seconds added to the creation time when placing the minute "
        "ahead (more on a loaded machine)",
    )
    parser.add_argument(
        "--wait",
        type=float,
        default=90.0,
        help="seconds from the minute's start to wait for arrivals: an occurrence later "
        "than that counts as missing (more where the machine cannot keep up)",
    )
    parser.add_argument(
        "--instances",
        type=int,
        default=1,
        help="local hosts against the one Azurite, as a deployment scaled out to that many "
        "instances (each one Python process, as a Flex Consumption instance runs one)",
    )
    args = parser.parse_args(argv)
    print(
        f"host: {args.label} ({args.root}), dispatch workers {args.dispatch_workers}, "
        f"instances {args.instances}"
    )
    print()
    print(
        "| jobs in one minute | received | p50 s | p99 s | max s | missing | doubled | early "
        "| host cores | Azurite cores |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|", flush=True)
    for count in (int(n) for n in args.counts.split(",")):
        print(f"[{datetime.now(UTC):%H:%M:%S}] {count} in one minute", file=sys.stderr)
        r = run(
            count, args.root.resolve(), args.dispatch_workers, args.margin, args.wait,
            args.instances,
        )  # fmt: skip
        print(
            f"| {r['count']:,} | {r['received']:,} | {r['p50']:.2f} | {r['p99']:.2f} "
            f"| {r['max']:.2f} | {r['missing']} | {r['doubled']} | {r['early']} "
            f"| {r['host_cores']:.2f} | {r['azurite_cores']:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
