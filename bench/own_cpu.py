"""Python and C function calls per occurrence, inside the storage requests and outside them:
the executor's and the dispatcher's own CPU, counted (not timed: a count does not move with
the machine's load).

    .venv/bin/python bench/own_cpu.py [--root BASE] [--runs 3] [--occurrences 5] [--top 25]
                                      [--https]

Each run is a process of its own per tree (this tree, and `--root`'s, the baseline, in turns),
against a fresh Azurite and an HTTP target in a process of its own (bench/http_target.py):

- executor: one-time HTTP jobs, each as the dispatcher leaves it (its occurrence sent), one
  scheduled occurrence of each delivered 1.5 s early (`SCHEDULER_PRECISION=second`'s usual
  case: read, decide, wait for the second, claim, run, history, finish) through the worker's
  composition root (`Runtime.execute`, so the metrics and notifications observe it too),
  a clock the run moves itself; one untraced first (imports, clients, connections);
  `--https`: the target serves HTTPS with a test CA's certificate, and the executor trusts
  certifi's bundle with that CA added (`verify`, as the default trusts certifi's bundle);
- dispatcher: ten hourly jobs due in one minute, sent and advanced by one tick
  (`Dispatcher.tick`), less a tick with nothing due just before it, divided by ten.

While an occurrence runs, `sys.setprofile` / `threading.setprofile` count every Python call
and every C call, in every thread but the executor's lease heartbeat (which runs beside the
attempt), and sort each into: **storage** (an Azure SDK frame, `site-packages/azure/`, is on
the stack: the request, the SDK's entity (de)serialisation, azure-core's pipeline and the
transport under it), **action HTTP** (`requests`/urllib3 with no Azure frame above: the
job's action), and **ours** (everything else: our code, the standard library and
third-party code it calls). Root logging is at INFO with the structured formatter into
/dev/null, as a host's console. The ranking (`--top`) counts each `scheduler_lib` function
with all the calls made under it outside the storage requests and the action's HTTP
(inclusive, so nested functions both count; and "self:" the calls whose nearest
`scheduler_lib` frame is the function's, the standard library's under it included), for
this tree's last run.

Printed: medians over every occurrence of every run, per tree, and the ratio of this tree
to the baseline; and CPU ms per occurrence (`time.process_time`, the same occurrences
untraced; moves with the machine's load).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
T0 = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
ZONES = ("storage", "action HTTP", "ours")
DISPATCHED = 10  # jobs per measured tick


class CallCounter:
    """Counts calls by zone (see the module docstring) while `recording`."""

    def __init__(self, package_dir: str) -> None:
        self.package_dir = package_dir
        self.zones: Counter[str] = Counter()
        self.inclusive: Counter[str] = Counter()
        self.own: Counter[str] = Counter()
        self.recording = False
        self._lock = threading.Lock()

    def profile(self, frame: FrameType, event: str, _arg: Any) -> None:
        if not self.recording or event not in ("call", "c_call"):
            return
        if threading.current_thread().name == "heartbeat":
            return
        zone, ours = "ours", []
        f: FrameType | None = frame
        while f is not None:
            name = f.f_code.co_filename
            if "/site-packages/azure/" in name:
                zone = "storage"  # the outermost boundary on the stack wins
            elif "/site-packages/requests/" in name or "/site-packages/urllib3/" in name:
                if zone != "storage":
                    zone = "action HTTP"
            elif name.startswith(self.package_dir):
                module = str(f.f_globals.get("__name__", "?")).removeprefix("scheduler_lib.")
                ours.append(f"{module}.{f.f_code.co_qualname}")
            f = f.f_back
        with self._lock:
            self.zones[zone] += 1
            if zone == "ours":
                for function in set(ours):
                    self.inclusive[function] += 1
                self.own[ours[0] if ours else "(outside scheduler_lib)"] += 1

    @contextmanager
    def installed(self) -> Iterator[CallCounter]:
        sys.setprofile(self.profile)
        threading.setprofile(self.profile)
        try:
            yield self
        finally:
            sys.setprofile(None)
            threading.setprofile(None)

    def take(self) -> Counter[str]:
        """The inclusive counts so far, and start again."""
        taken, self.inclusive = self.inclusive, Counter()
        own, self.own = self.own, Counter()
        taken.update({f"self: {name}": calls for name, calls in own.items()})
        return taken

    def count(self, action: Callable[[], Any]) -> dict[str, int]:
        """The calls `action` makes, by zone."""
        before = Counter(self.zones)
        self.recording = True
        try:
            action()
        finally:
            self.recording = False
        made = self.zones - before
        return {zone: made[zone] for zone in ZONES}


class Clock:
    """Moves 250 ms a reading, and by what the executor sleeps: a repeatable run."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        value = self.now
        self.now += timedelta(milliseconds=250)
        return value

    def sleep(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def child(occurrences: int, https: bool) -> dict[str, Any]:
    """One run in this process, against the tree on `sys.path` (see the module docstring)."""
    from http_target import Target

    from devtools.azurite import start_azurite
    from scheduler_lib.config import Settings
    from scheduler_lib.domain import Bookkeeping, JobDefinition, JobRecord, JobState
    from scheduler_lib.domain.collections import CollectionRecord
    from scheduler_lib.domain.messages import ExecutionMessage
    from scheduler_lib.logs import ContextFormatter
    from scheduler_lib.runtime import Runtime
    from scheduler_lib.store.collections import put_collection
    from scheduler_lib.store.jobs import put_job
    from tests.dispatch.support import definition, make_job

    handler = logging.StreamHandler(open(os.devnull, "w"))  # noqa: SIM115  # until exit
    handler.setFormatter(ContextFormatter())
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.INFO)
    logging.getLogger("azure").setLevel(logging.WARNING)

    counter = CallCounter(str(Path(sys.path[0]) / "scheduler_lib"))
    adapters: dict[str, Any] = {}
    tls = None
    if https:  # a test CA's server certificate; the client trusts certifi's bundle and it
        import certifi

        from tests.support.certs import make_pki

        pki = make_pki(Path(tempfile.mkdtemp(prefix="own-cpu-")))
        bundle = pki.directory / "bundle.pem"
        bundle.write_bytes(Path(certifi.where()).read_bytes() + Path(pki.ca_file).read_bytes())
        adapters["verify"], tls = str(bundle), (pki.server_cert_file, pki.server_key_file)
    azurite, target = start_azurite(), Target(tls=tls)
    result: dict[str, Any] = {"executor": [], "dispatcher": [], "cpu": {}}
    try:
        settings = Settings(
            storage_connection_string=azurite.connection_string,
            storage_prefix="o" + uuid.uuid4().hex[:10],
            storage_queue_endpoint=azurite.queue_endpoint_template,
        )
        clock = Clock(T0)
        runtime = Runtime(settings, clock=clock, sleep=clock.sleep, action_adapters=adapters)
        runtime.ensure_storage()
        store = runtime.store
        put_collection(store, CollectionRecord("0000-sub", "rg1", "c1", "westeurope",
                                               {"state": "Enabled"}))  # fmt: skip

        def occurrence(name: str) -> Callable[[], Any]:
            action = {"type": "Http", "request": {"uri": target.url, "method": "POST"}}
            record = put_job(store, JobRecord(
                "0000-sub", "rg1", "c1", name,
                JobDefinition({"startTime": T0.isoformat(), "action": action}),
                created_time=T0 - timedelta(hours=1), state=JobState.ENABLED,
                bookkeeping=Bookkeeping(occurrences=1, sent=(T0,)),
            ))  # fmt: skip
            body = ExecutionMessage.scheduled(record.key, T0, 1, record.incarnation).to_json()

            def run() -> None:
                clock.now = T0 - timedelta(milliseconds=1500)
                report = runtime.execute(body, message_id=uuid.uuid4().hex,
                                         dequeue_count=1)  # fmt: skip
                if report.disposition != "Ran":
                    raise RuntimeError(f"the occurrence did not run: {report}")

            return run

        def tick(base: datetime, prefix: str) -> Callable[[], Any]:
            for i in range(DISPATCHED):
                due = base + timedelta(seconds=10 + i)
                make_job(store, f"{prefix}{i:02d}", definition(due, "Day"),
                         created=base - timedelta(minutes=10))  # fmt: skip

            def run() -> None:
                clock.now = base - timedelta(minutes=1)
                report = runtime.dispatcher.tick(now=base - timedelta(minutes=1))
                if report.messages_sent != DISPATCHED:
                    raise RuntimeError(f"the tick sent {report.messages_sent}")

            return run

        def empty(base: datetime) -> Callable[[], Any]:
            def run() -> None:
                clock.now = base - timedelta(minutes=2)
                runtime.dispatcher.tick(now=base - timedelta(minutes=2))

            return run

        occurrence("warm-up")()
        base = T0 + timedelta(minutes=5)
        empty(base)()
        tick(base, "warm")()
        with counter.installed():
            for i in range(occurrences):
                result["executor"].append(counter.count(occurrence(f"traced{i}")))
            result["inclusive"] = {"executor": _per(counter.take(), occurrences)}
            for i in range(occurrences):
                base = T0 + timedelta(minutes=10 + 5 * i)
                idle = counter.count(empty(base))
                full = counter.count(tick(base, f"d{i}-"))
                result["dispatcher"].append({z: (full[z] - idle[z]) / DISPATCHED for z in ZONES})
            ticks = counter.take()  # the empty ticks' share is left in: a ranking, not a total
            result["inclusive"]["dispatcher"] = _per(ticks, occurrences * DISPATCHED)
        timed_exec: list[float] = []
        timed_tick: list[float] = []
        for i in range(occurrences):
            run = occurrence(f"timed{i}")
            cpu = time.process_time()
            run()
            timed_exec.append((time.process_time() - cpu) * 1000)
        for i in range(occurrences):
            base = T0 + timedelta(hours=2, minutes=5 * i)
            run_empty, run_tick = empty(base), tick(base, f"t{i}-")
            cpu = time.process_time()
            run_empty()
            idle_cpu = time.process_time() - cpu
            cpu = time.process_time()
            run_tick()
            timed_tick.append((time.process_time() - cpu - idle_cpu) * 1000 / DISPATCHED)
        result["cpu"] = {"executor": timed_exec, "dispatcher": timed_tick}
    finally:
        target.stop()
        azurite.stop()
    return result


def _per(counts: Counter[str], n: int) -> dict[str, float]:
    return {name: calls / n for name, calls in counts.most_common(300)}


def _run_child(root: Path, occurrences: int, https: bool) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(BENCH)])}
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", "--root", str(root),
         "--occurrences", str(occurrences), *(["--https"] if https else [])],
        check=True, capture_output=True, text=True, env=env, cwd=root,
    )  # fmt: skip
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _medians(runs: list[dict[str, Any]], path: str) -> dict[str, float]:
    rows = [row for run in runs for row in run[path]]
    found = {zone: statistics.median(row[zone] for row in rows) for zone in ZONES}
    found["all"] = statistics.median(sum(row[z] for z in ZONES) for row in rows)
    found["cpu ms"] = statistics.median(ms for run in runs for ms in run["cpu"][path])
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, help="the baseline tree (e.g. a checkout of main)")
    parser.add_argument("--runs", type=int, default=3, help="processes per tree")
    parser.add_argument("--occurrences", type=int, default=5, help="per path and run")
    parser.add_argument("--top", type=int, default=25, help="our functions ranked (this tree)")
    parser.add_argument(
        "--https",
        action="store_true",
        help="the executor's target over HTTPS (certifi's bundle and a test CA)",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        sys.path.insert(0, str(args.root))
        print(json.dumps(child(args.occurrences, args.https)))
        return
    trees = {"this tree": ROOT}
    if args.root:
        trees = {"baseline": args.root.resolve(), **trees}
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for _ in range(args.runs):
        for name, root in trees.items():
            runs[name].append(_run_child(root, args.occurrences, args.https))
    target = "an HTTPS target" if args.https else "an HTTP target"
    print(f"{args.runs} runs x {args.occurrences} occurrences per path and tree, {target}; "
          f"medians per occurrence; load {os.getloadavg()[0]:.1f}\n")  # fmt: skip
    for path in ("executor", "dispatcher"):
        found = {name: _medians(runs[name], path) for name in trees}
        header = " | ".join(trees)
        ratio = " | ratio" if "baseline" in trees else ""
        print(f"| {path}: calls per occurrence | {header}{ratio} |")
        print("|---|" + "---:|" * (len(trees) + bool(ratio)))
        for zone in (*ZONES, "all", "cpu ms"):
            values = [found[name][zone] for name in trees]
            cells = " | ".join(f"{v:,.2f}" if zone == "cpu ms" else f"{v:,.0f}" for v in values)
            change = ""
            if ratio:
                base, this = found["baseline"][zone], found["this tree"][zone]
                change = f" | {this / base:.3f}" if base else " | -"
            print(f"| {zone} | {cells}{change} |")
        print()
    for path in ("executor", "dispatcher") if args.top else ():
        inclusive = Counter(runs["this tree"][-1]["inclusive"][path])
        print(f"| ours, inclusive: {path} (this tree, last run) | calls per occurrence |")
        print("|---|---:|")
        for function, calls in inclusive.most_common(args.top):
            print(f"| {function} | {calls:,.0f} |")
        print()


if __name__ == "__main__":
    main()
