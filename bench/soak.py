"""Soak: 200 jobs through the real local host across a crash, a storage restart and a
DELETE/PUT storm; prints lost, doubled, in-flight repeated and late occurrences.

    .venv/bin/python bench/soak.py [--minutes 4]

Runs about `--minutes` + 1 minutes. Pieces, all real: a dedicated Azurite with its data on
disk, the local host (`python -m devtools.devhost`, the same `Runtime` as
function_app.py) in a process of its own, and an HTTP target that records every request
with its `x-ms-scheduler-expected-execution-time` and `x-ms-execution-tag` headers.

Jobs (4 Standard collections of 50): 150 every-minute recurrences from the first minute
boundary M0 to M0 + minutes - 1 (20 of them also take the storm), and 50 one-time jobs
spread over the window every few seconds. What happens, in seconds after M0:

- 25: the host is killed with SIGKILL; 35: a new host starts (a crash and a restart);
- 70: Azurite stops; 77: it starts again on the same ports and data directory;
- 115-125: DELETE then PUT of the same job, over and over, for 20 recurring jobs, across
  their occurrence at M0 + 2 min (not owed, since the job did not exist throughout; a
  double of it, or any occurrence after the last PUT missing or doubled, is counted).

`SCHEDULER_GRACE_PERIOD` is one minute, so occurrences missed by the downtime run late. A
message the killed host had already taken stays hidden for its visibility timeout (10
minutes, as the Functions queue trigger holds one); an attempt it had claimed is taken over
by its watchdog once the claim's lease runs out (about 20 s after the kill) and runs again,
a repeat with the same execution tag ("in-flight repeated").
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from soak_report import Arrival, Window, table, tally  # noqa: E402

from devtools.azurite import free_port, port_open, start_azurite  # noqa: E402
from devtools.local_run import LOCAL_SETTINGS  # noqa: E402

KEY = "soak-key"
BASE = "/subscriptions/soak/resourceGroups/soak/providers/Microsoft.Scheduler/jobCollections"
RECURRING, ONE_TIME, STORMED, PER_COLLECTION = 150, 50, 20, 50
KILL_AT, RESTART_AT = 25, 35
STORAGE_STOP_AT, STORAGE_START_AT = 70, 77
STORM_AT, STORM_UNTIL = 115, 125  # across the occurrence at M0 + 2 min


def now() -> datetime:
    return datetime.now(UTC)


def iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


class Recorder(ThreadingHTTPServer):
    """The jobs' target: one record per request, whatever its method."""

    daemon_threads = True
    request_queue_size = 1024

    def __init__(self) -> None:
        self.arrivals: list[Arrival] = []
        self.lock = threading.Lock()
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def _record(self) -> None:
                arrived = now()
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                expected = self.headers["x-ms-scheduler-expected-execution-time"]
                arrival = Arrival(
                    job=self.path.strip("/"),
                    expected=datetime.fromisoformat(expected),
                    tag=self.headers.get("x-ms-execution-tag", ""),
                    arrived=arrived,
                )
                with recorder.lock:
                    recorder.arrivals.append(arrival)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST = _record

            def log_message(self, *args: object) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server_address[1]}"


class Host:
    """The local host in its own process, so that it can be killed like a crashed worker."""

    def __init__(self, env: dict[str, str], port: int, log: Path) -> None:
        self.env, self.port, self.log = env, port, log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "devtools.devhost", "--port", str(self.port)],
                cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        deadline = time.monotonic() + 30
        while not port_open(self.port):
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError(f"the host did not start; see {self.log}")
            time.sleep(0.1)

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()  # SIGKILL: no shutdown, messages in hand stay hidden
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)


def job_body(target: str, name: str, **timing: object) -> dict:
    action = {"type": "Http", "request": {"method": "POST", "uri": f"{target}/{name}"}}
    return {"properties": {"action": {**action, "retryPolicy": {"retryType": "None"}}, **timing}}


def wait_until(moment: datetime) -> None:
    time.sleep(max(0.0, (moment - now()).total_seconds()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=int, default=4, help="recurring occurrences per job")
    minutes = parser.parse_args().minutes
    work = Path(tempfile.mkdtemp(prefix="soak-"))
    ports = (free_port(), free_port(), free_port())
    azurite = start_azurite(location=work / "azurite", ports=ports)
    recorder = Recorder()
    api_port = free_port()
    env = {**os.environ, **LOCAL_SETTINGS, "AzureWebJobsStorage": azurite.connection_string,
           "SCHEDULER_API_KEYS": KEY, "SCHEDULER_GRACE_PERIOD": "PT1M"}  # fmt: skip
    host = Host(env, api_port, work / "host.log")
    windows: list[Window] = []
    try:
        host.start()
        api = httpx.Client(
            base_url=f"http://127.0.0.1:{api_port}/api{BASE}",
            headers={"Authorization": f"Bearer {KEY}"},
            params={"api-version": "2016-03-01"},
            timeout=30,
        )
        for c in range(4):
            created = api.put(f"/c{c}", json={"location": "local", "properties": {}})
            created.raise_for_status()
        m0 = (now() + timedelta(seconds=45)).replace(second=0, microsecond=0)
        m0 += timedelta(minutes=1)
        end = m0 + timedelta(minutes=minutes - 1, seconds=30)
        expected: dict[str, list[datetime]] = {}
        groups: dict[str, str] = {}
        bodies: dict[str, dict] = {}
        for i in range(RECURRING + ONE_TIME):
            name = f"r{i:03d}" if i < RECURRING else f"o{i - RECURRING:03d}"
            if i < RECURRING:
                recurrence = {"frequency": "Minute", "interval": 1, "endTime": iso(end)}
                body = job_body(recorder.url, name, startTime=iso(m0), recurrence=recurrence)
                expected[name] = [m0 + timedelta(minutes=k) for k in range(minutes)]
                groups[name] = "recurring, stormed" if i < STORMED else "recurring"
            else:
                step = (minutes * 60 - 20) / ONE_TIME
                due = m0 + timedelta(seconds=5 + round((i - RECURRING) * step))
                body = job_body(recorder.url, name, startTime=iso(due))
                expected[name] = [due]
                groups[name] = "one-time"
            bodies[name] = body
            api.put(f"/c{i // PER_COLLECTION}/jobs/{name}", json=body).raise_for_status()
        print(f"200 jobs created; M0 = {m0:%H:%M:%S} UTC, window ends {end:%H:%M:%S}")

        wait_until(m0 + timedelta(seconds=KILL_AT))
        killed = now()
        host.kill()
        wait_until(m0 + timedelta(seconds=RESTART_AT))
        host.start()
        windows.append(Window("host kill -9", killed, now()))

        wait_until(m0 + timedelta(seconds=STORAGE_STOP_AT))
        stopped = now()
        azurite.stop()  # its data stays in work/azurite
        wait_until(m0 + timedelta(seconds=STORAGE_START_AT))
        azurite = start_azurite(location=work / "azurite", ports=ports)
        windows.append(Window("Azurite restart", stopped, now()))

        wait_until(m0 + timedelta(seconds=STORM_AT))
        storm_started, requests = now(), 0
        while now() < m0 + timedelta(seconds=STORM_UNTIL):
            for i in range(STORMED):
                name = f"r{i:03d}"
                path = f"/c{i // PER_COLLECTION}/jobs/{name}"
                api.delete(path).raise_for_status()
                api.put(path, json=bodies[name]).raise_for_status()
                requests += 2
        storm = Window("DELETE/PUT storm", storm_started, now())
        print(f"storm: {requests} requests in "
              f"{(storm.end - storm.start).total_seconds():.1f}s")  # fmt: skip
        # A stormed job is a new job after its last PUT: occurrences between the first
        # DELETE and the last PUT are not owed (their loss is not counted; a double is).
        optional: dict[str, list[datetime]] = {}
        for i in range(STORMED):
            name = f"r{i:03d}"
            optional[name] = [t for t in expected[name] if storm.start <= t <= storm.end]
            expected[name] = [t for t in expected[name] if t not in optional[name]]

        wait_until(end + timedelta(seconds=40))
        with recorder.lock:
            arrivals = list(recorder.arrivals)
        print()
        print(f"Soak: {len(arrivals)} requests received; disruptions (s after M0): "
              f"kill -9 {KILL_AT}-{RESTART_AT}, Azurite restart "
              f"{STORAGE_STOP_AT}-{STORAGE_START_AT}, storm {STORM_AT}-{STORM_UNTIL}")  # fmt: skip
        print(table(tally(expected, arrivals, windows, groups, optional), [*windows, storm]))
    finally:
        host.stop()
        azurite.stop()
        recorder.shutdown()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
