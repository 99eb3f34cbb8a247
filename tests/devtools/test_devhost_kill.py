"""The local host killed with SIGKILL in the middle of its actions: each occurrence in flight
runs again within seconds, as a rerun of the same execution tag, and none is lost.

The killed host's messages stay hidden for the queue trigger's visibility timeout (the
Functions host's 10 minutes, which the local host keeps too), so the redelivery of those
messages is not what brings them back: each claim carries a lease its worker renews while
the action runs, and a watchdog message sent at the claim takes an expired lease over
(`execution/lease.py`); while the worker lives, each beat keeps that watchdog hidden past
the renewed lease, so no instance holds it when the worker's instance dies (one killed
holding a watchdog it had taken would hide it for those 10 minutes: a fresh-clone CI run
saw 2 of the 12 not run again within the bound before this). A living worker is never
taken over: the actions are held longer than a lease before the kill, and no second request
arrives meanwhile.

Real pieces: two `python -m devtools.devhost` processes (the second, started while the first
runs its actions, stands for the other instances of a Function App: they are already running
when one dies, so the bound after the kill does not include a host's start-up, which on a
loaded machine alone took longer than the bound), the session's Azurite, a real HTTP target
that holds each first request and answers the reruns at once."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from devtools.azurite import ROOT, Azurite, free_port
from scheduler_lib.config import Settings
from tests.devtools.support import devhost_env, wait_serving
from tests.devtools.test_devhost import COLLECTION, KEY, _wait_until
from tests.support.http_target import HttpTarget, RecordedRequest

JOBS = 12
EXTENSIONS = {"api-version": "2026-12-01"}  # for the action's `timeout`
ALIVE = 20.0  # seconds the actions run under living hosts before the kill
#: How long the target holds each first request: longer than a lease and its confirmation
#: (`lease.LEASE` + `lease.CONFIRM`), so a takeover of a living worker would show, and
#: longer than the second host's start-up (`support.STARTUP`) and `ALIVE`, so every action
#: is still in flight when its host is killed (checked before the kill). Released at once by
#: the target's close.
HOLD = 360.0
#: The actions' own attempt timeout (2026-12-01), longer than `HOLD`: with the default 60 s
#: a loaded machine's slow start of the second host let the first attempts time out (and
#: retry) before the kill.
ATTEMPT = "PT8M"
BOUND = 30.0  # seconds after the kill within which every occurrence must run again
#: Seconds the first host may take to run the jobs: its first tick is at the next minute,
#: up to 60 s after they are created. Only bounds a hang.
FIRST_RUN = 150.0


class Hosts:
    """Local hosts started one after the other on one storage prefix."""

    def __init__(self, azurite: Azurite, settings: Settings, logs: Path) -> None:
        self.env = devhost_env(azurite, settings, key=KEY)
        self.processes: list[subprocess.Popen] = []
        self.logs = logs

    def start(self) -> str:
        port = free_port()
        output = self.logs / f"devhost{len(self.processes)}.log"
        with output.open("wb") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "devtools.devhost", "--port", str(port)],
                cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
        self.processes.append(process)
        base = f"http://127.0.0.1:{port}/api"
        # A new deployment ticks at the next minute, not at start-up: wait for the API.
        wait_serving(process, base, output=output)
        return base

    def stop_all(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
                process.wait()


@pytest.fixture
def hosts(azurite: Azurite, settings: Settings, tmp_path: Path) -> Iterator[Hosts]:
    started = Hosts(azurite, settings, tmp_path)
    try:
        yield started
    finally:
        started.stop_all()


def _client(base: str) -> httpx.Client:
    return httpx.Client(
        base_url=base,
        headers={"Authorization": f"Bearer {KEY}"},
        params={"api-version": "2016-03-01"},
        timeout=30,
    )


# Its waits add up to more than the suite's 300 s per test on a loaded machine (two host
# start-ups, the next-minute tick, the window before the kill): this only bounds a hang.
@pytest.mark.timeout(900)
def test_occurrences_in_flight_when_the_host_is_killed_run_again_within_seconds(
    hosts: Hosts,
) -> None:
    with HttpTarget() as target:
        target.reply(delay=HOLD, times=JOBS)  # every first request; the reruns get 200 at once
        with _client(hosts.start()) as client:
            answer = client.put(
                COLLECTION, json={"location": "local", "properties": {"sku": {"name": "Standard"}}}
            )
            assert answer.status_code in (200, 201), answer.text
            start = (datetime.now(UTC) + timedelta(seconds=5)).replace(microsecond=0)
            for i in range(JOBS):
                request = {"method": "POST", "uri": target.url_for(f"/j{i}")}
                job = {"properties": {
                    "startTime": start.isoformat().replace("+00:00", "Z"),
                    "action": {"type": "Http", "timeout": ATTEMPT, "request": request},
                }}  # fmt: skip
                created = client.put(f"{COLLECTION}/jobs/j{i}", json=job, params=EXTENSIONS)
                assert created.status_code == 201, created.text
        held = target.wait_for_requests(JOBS, timeout=FIRST_RUN)
        other = hosts.start()  # another instance, running before the first one dies
        time.sleep(ALIVE)  # the actions run on: a living worker is not taken over
        assert len(target.requests) == JOBS
        assert time.monotonic() < min(r.arrived for r in held) + HOLD, "HOLD too short"

        hosts.processes[0].kill()  # SIGKILL: no shutdown, its messages stay hidden
        killed = time.monotonic()
        with _client(other) as client:
            try:
                target.wait_for_requests(2 * JOBS, timeout=BOUND + 15)
            finally:
                requests = target.requests
            reruns = requests[JOBS:]
            late = sorted(round(r.arrived - killed, 1) for r in reruns)
            assert len(reruns) == JOBS and late[-1] <= BOUND, f"reruns after the kill (s): {late}"
            occurrences: dict[int, datetime] = {}
            for i in range(JOBS):
                first, again = target.requests_to(f"/j{i}")
                assert again.header("x-ms-execution-tag") == first.header("x-ms-execution-tag")
                occurrences[i] = _expected(first)
                assert _expected(again) == occurrences[i]
                # `start`, or for a job created after it had passed (12 PUTs took longer than
                # its 5 s on a loaded machine) the second the job was created: it runs at once.
                assert occurrences[i] >= start

            def recorded() -> bool:
                return all(_history(client, i) for i in range(JOBS))

            _wait_until(recorded, timeout=30, what="the reruns' history")
            for i in range(JOBS):
                entries = _history(client, i)
                assert len(entries) == 1, (entries, len(target.requests_to(f"/j{i}")))
                [entry] = entries
                assert entry["status"] == "Completed" and entry["retryCount"] == 0
                assert entry["message"].startswith("[Rerun] "), entry["message"]
                assert datetime.fromisoformat(entry["expectedExecutionTime"]) == occurrences[i]
            assert len(target.requests) == 2 * JOBS  # none ran a third time


def _expected(request: RecordedRequest) -> datetime:
    """The occurrence an attempt ran for, as the scheduler told the target."""
    header = request.header("x-ms-scheduler-expected-execution-time")
    assert header, request.headers
    return datetime.fromisoformat(header)


def _history(client: httpx.Client, i: int) -> list[dict]:
    response = client.get(f"{COLLECTION}/jobs/j{i}/history")
    assert response.status_code == 200, response.text
    return [h["properties"] for h in response.json()["value"]]
