"""Follow one execution message, and one PUT of a job, through the code: stops and returns.

Issue 21 asks how many rooms a reader walks through to follow one message (or one PUT body),
and how often they walk back into a room they already left. This script is how that is
counted, so it can be counted the same way before and after a reshaping:
`python devtools/call_path.py` (both paths) or `python devtools/call_path.py message -v`
(`-v`: print the path itself, one stop per line).

How it counts (the rule, stated once):
- It runs the real thing against a real Azurite it starts on free ports: the worker's
  composition root (`runtime.Runtime`) executing one scheduled occurrence of an Http job that
  calls a local HTTP server (a first attempt, on time, that succeeds); and the API app
  (`api.create_app`, through Starlette's `TestClient`) answering one `PUT` that creates a job
  with a recurrence (`--early`: the message delivered 1.5 s before its second, as the queue
  delivers a scheduled occurrence, so the executor waits for it and reads the job again).
  Each is run once untraced first (warm-up: lazy clients, caches), then
  once traced on a fresh job.
- While the traced run lasts, `sys.setprofile` / `threading.setprofile` record every call of
  a Python function whose source file is under `scheduler_lib/` (generated code such as a
  dataclass's `__init__` has no such file and is left out; C functions are left out). A call
  is named by its module (`execution.claims`). A coroutine or generator resumed after an
  `await` or `yield` is not called again (the profiler reports its resumption as a "call"
  event too; it is left out, as a plain function's return to its caller is). Every thread
  is recorded (the API runs its route on a worker thread) except the executor's lease
  heartbeat, which runs beside the attempt, not in its path.
- A *stop* is a run of consecutive calls in the same module: the path
  `execute, execute, claims, store.jobs, claims` has 4 stops. The *path* is the list of stops.
- A *return* is a stop in a module the path already stopped in before (a room visited
  again): in that example `claims` once, so 1 return.
- The headline numbers count the rooms of the layer that owns the path (`SCOPES`): for a
  message the executor's modules (`execution/`), for a PUT the API's and the use cases'
  (`api/`, `service/`). Calls elsewhere (storage, the domain types, the wire readers, the
  actions) are left out *before* collapsing, so `execute > store.jobs > execute` is one stop
  in `execute`. This is the count issue 21 quotes (24 stops for a message); it is printed
  beside the same rule applied to every `scheduler_lib` module ("all modules"), which counts
  each hop into storage or the domain types too and so is far larger, and is not the target.

It prints the path's modules and the numbers for each; `stops(...)` and `returns(...)`
are the rule itself, and `trace_message` / `trace_put` give the calls to a test.
"""

from __future__ import annotations

import argparse
import dis
import http.server
import inspect
import sys
import threading
import uuid
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGE_DIR = str(ROOT / "scheduler_lib")
T0 = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
#: The packages whose modules a path's headline numbers count (see the module docstring).
SCOPES = {"message": ("execution",), "put": ("api", "service")}
_RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
_RESUME = dis.opmap["RESUME"]


def in_scope(calls: list[str], packages: tuple[str, ...]) -> list[str]:
    """The calls of `calls` made in a module of one of `packages`."""
    return [module for module in calls if module.split(".")[0] in packages]


def stops(calls: list[str]) -> list[str]:
    """`calls` (module names, in call order) with consecutive repeats collapsed: the path."""
    path: list[str] = []
    for module in calls:
        if not path or path[-1] != module:
            path.append(module)
    return path


def returns(path: list[str]) -> int:
    """How many stops of `path` are in a module the path already stopped in before."""
    seen: set[str] = set()
    count = 0
    for module in path:
        count += module in seen
        seen.add(module)
    return count


def resumed(frame: FrameType) -> bool:
    """Whether this "call" event is a coroutine or generator taking up again where it left
    off (at an `await`, a `yield`), not a call: its frame stands at a `RESUME` whose argument
    is not 0 (0 marks a function's start)."""
    code = frame.f_code
    if not code.co_flags & _RESUMABLE:
        return False
    raw, at = code.co_code, frame.f_lasti
    return 0 <= at < len(raw) - 1 and raw[at] == _RESUME and raw[at + 1] != 0


class Recorder:
    """The module of every `scheduler_lib` call while `recording` (see the module)."""

    def __init__(self, skip_threads: tuple[str, ...] = ()) -> None:
        self.calls: list[str] = []
        self.recording = False
        self.skip_threads = skip_threads
        self._lock = threading.Lock()

    def profile(self, frame: FrameType, event: str, _arg: Any) -> None:
        if event != "call" or not self.recording or resumed(frame):
            return
        filename = frame.f_code.co_filename
        if not filename.startswith(PACKAGE_DIR):
            return
        if threading.current_thread().name in self.skip_threads:
            return
        module = str(frame.f_globals.get("__name__", "?")).removeprefix("scheduler_lib.")
        with self._lock:
            self.calls.append(module)

    @contextmanager
    def installed(self) -> Iterator[Recorder]:
        """Profile this thread and every thread started while the block runs."""
        sys.setprofile(self.profile)
        threading.setprofile(self.profile)
        try:
            yield self
        finally:
            sys.setprofile(None)
            threading.setprofile(None)

    @contextmanager
    def on(self) -> Iterator[None]:
        self.recording = True
        try:
            yield
        finally:
            self.recording = False


@dataclass
class _Clock:
    """A clock the trace moves itself (250 ms a reading), so a traced run is repeatable."""

    now: datetime

    def __call__(self) -> datetime:
        value = self.now
        self.now += timedelta(milliseconds=250)
        return value

    def sleep(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


class _Ok(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *_args: Any) -> None:
        pass


@contextmanager
def _target() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def _settings() -> Iterator[Any]:
    from devtools.azurite import start_azurite
    from scheduler_lib.config import Settings

    azurite = start_azurite()
    try:
        yield Settings(
            storage_connection_string=azurite.connection_string,
            api_keys=("trace-key",),
            storage_prefix="t" + uuid.uuid4().hex[:12],
            storage_queue_endpoint=azurite.queue_endpoint_template,
        )
    finally:
        azurite.stop()


def trace_message(settings: Any, *, early: bool = False) -> list[str]:
    """The modules called (in order) while the worker executes one scheduled occurrence
    delivered on time (`early`: 1.5 s before its second, as the queue delivers it, so the
    executor waits for the second and reads the job again)."""
    from scheduler_lib.domain import Bookkeeping, JobDefinition, JobRecord, JobState
    from scheduler_lib.domain.collections import CollectionRecord
    from scheduler_lib.domain.messages import ExecutionMessage
    from scheduler_lib.runtime import Runtime
    from scheduler_lib.store.collections import put_collection
    from scheduler_lib.store.jobs import put_job

    clock = _Clock(T0)
    runtime = Runtime(settings, clock=clock, sleep=clock.sleep)
    runtime.ensure_storage()
    store = runtime.store
    put_collection(
        store, CollectionRecord("Sub-1", "rg", "coll", "westeurope", {"state": "Enabled"})
    )

    def one(name: str, url: str) -> Callable[[], Any]:
        action = {
            "type": "Http",
            "request": {"uri": url, "method": "POST", "body": "ping"},
            "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT30S", "retryCount": 4},
        }
        record = JobRecord(
            "Sub-1", "rg", "coll", name,
            JobDefinition({"startTime": T0.isoformat(), "action": action}),
            created_time=T0 - timedelta(hours=1), state=JobState.ENABLED,
            next_execution_time=T0 + timedelta(days=1), bookkeeping=Bookkeeping(occurrences=1),
        )  # fmt: skip
        record = put_job(store, record)
        message = ExecutionMessage.scheduled(record.key, T0, 1, record.incarnation)

        def run() -> Any:
            clock.now = T0 + timedelta(milliseconds=-1500 if early else 500)
            [report] = runtime.executor.handle_body(
                message.to_json(), message_id=uuid.uuid4().hex, dequeue_count=1
            )
            return report

        return run

    recorder = Recorder(skip_threads=("heartbeat",))
    with _target() as url, recorder.installed():
        warm = one("warm-up", url)()
        run = one("traced", url)
        with recorder.on():
            report = run()
    if warm.disposition != "Ran" or report.disposition != "Ran":
        raise RuntimeError(f"the traced message did not run: {report}")
    return recorder.calls


def trace_put(settings: Any) -> list[str]:
    """The modules called (in order) while the API app answers one PUT creating a job."""
    with warnings.catch_warnings():  # Starlette's note about httpx: not this script's business
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    from scheduler_lib.api import create_app

    collection = (
        "/api/subscriptions/Sub-1/resourceGroups/rg/providers/Microsoft.Scheduler"
        "/jobCollections/coll"
    )
    body = {
        "properties": {
            "startTime": "2026-03-04T09:00:00Z",
            "action": {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}},
            "recurrence": {"frequency": "Hour", "interval": 1},
        }
    }
    params = {"api-version": "2016-03-01"}
    headers = {"Authorization": "Bearer trace-key"}
    recorder = Recorder()
    with recorder.installed():
        app = create_app(settings, clock=_Clock(T0))
        with TestClient(app) as client:
            made = client.put(
                collection, params=params, headers=headers,
                json={"location": "westeurope", "properties": {"sku": {"name": "Standard"}}},
            )  # fmt: skip
            warm = client.put(
                f"{collection}/jobs/warm-up", params=params, headers=headers, json=body
            )
            with recorder.on():
                traced = client.put(
                    f"{collection}/jobs/traced", params=params, headers=headers, json=body
                )
    for answer in (made, warm, traced):
        if answer.status_code not in (200, 201):
            raise RuntimeError(f"the PUT failed: {answer.status_code} {answer.text}")
    return recorder.calls


def _print(name: str, calls: list[str], *, verbose: bool) -> None:
    scope = SCOPES[name]
    path = stops(in_scope(calls, scope))
    if verbose:
        for number, module in enumerate(path, 1):
            again = " (again)" if module in path[: number - 1] else ""
            print(f"  {number:3} {module}{again}")
    print(f"{name}: {len(path)} stops, {returns(path)} returns (modules of {'/, '.join(scope)}/)")
    print("  " + " > ".join(path))
    every = stops(calls)
    print(f"  all modules: {len(every)} stops, {returns(every)} returns")
    if verbose:
        print("  " + " > ".join(every))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("which", nargs="*", help="message, put (default: both)")
    parser.add_argument("-v", "--verbose", action="store_true", help="one stop per line")
    parser.add_argument(
        "--early", action="store_true", help="the message delivered 1.5 s before its second"
    )
    args = parser.parse_args(argv)
    if set(args.which) - {"message", "put"}:
        parser.error("paths are: message, put")
    with _settings() as settings:
        for which in args.which or ["message", "put"]:
            if which == "message":
                calls = trace_message(settings, early=args.early)
            else:
                calls = trace_put(settings)
            _print(which, calls, verbose=args.verbose)


if __name__ == "__main__":
    main()
