"""The local host as a user runs it: `python -m devtools.devhost` in its own process,
against a real Azurite, driven over HTTP. A job due in a few seconds must call a real HTTP
target and leave history; SIGTERM must stop the host cleanly."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from devtools.azurite import ROOT, Azurite, free_port
from scheduler_lib.config import Settings
from tests.devtools.support import devhost_env, wait_serving
from tests.support.http_target import HttpTarget

KEY = "devhost-key"
COLLECTION = (
    "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/c1"
)


@pytest.fixture
def devhost(azurite: Azurite, settings: Settings) -> Iterator[tuple[str, subprocess.Popen]]:
    port = free_port()
    env = devhost_env(azurite, settings, key=KEY)
    process = subprocess.Popen(
        [sys.executable, "-m", "devtools.devhost", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}/api"
    try:
        # A new deployment ticks at the next minute, not at start-up: wait for the API.
        wait_serving(process, base)
        yield base, process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _wait_until(condition, *, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_job_due_in_seconds_runs_and_leaves_history(devhost) -> None:
    base, process = devhost
    client = httpx.Client(
        base_url=base,
        headers={"Authorization": f"Bearer {KEY}"},
        params={"api-version": "2016-03-01"},
    )
    with HttpTarget() as target:
        created = client.put(
            COLLECTION, json={"location": "local", "properties": {"sku": {"name": "Standard"}}}
        )
        assert created.status_code in (200, 201), created.text
        start = (datetime.now(UTC) + timedelta(seconds=3)).replace(microsecond=0)
        job = {
            "properties": {
                "startTime": start.isoformat().replace("+00:00", "Z"),
                "action": {
                    "type": "Http",
                    "request": {"method": "POST", "uri": target.url_for("/hook"), "body": "hi"},
                },
            }
        }
        response = client.put(COLLECTION + "/jobs/soon", json=job)
        assert response.status_code == 201, response.text

        [request] = target.wait_for_requests(1, timeout=90)
        arrived = datetime.now(UTC)
        assert request.method == "POST" and request.text == "hi"
        assert request.header("x-ms-scheduler-expected-execution-time").startswith(
            start.strftime("%Y-%m-%dT%H:%M:%S")
        )
        assert arrived >= start

        def completed() -> bool:
            history = client.get(COLLECTION + "/jobs/soon/history").json()["value"]
            return [h["properties"]["status"] for h in history] == ["Completed"]

        def job_completed() -> bool:
            """The executor writes the history entry first, the job's state after it."""
            return client.get(COLLECTION + "/jobs/soon").json()["properties"]["state"] != "enabled"

        _wait_until(completed, timeout=30, what="the history entry")
        _wait_until(job_completed, timeout=30, what="the job's state")
        status = client.get(COLLECTION + "/jobs/soon").json()["properties"]
        assert status["state"] == "completed"
        assert status["status"]["executionCount"] == 1

    process.send_signal(signal.SIGTERM)
    output, _ = process.communicate(timeout=30)
    assert process.returncode == 0, output
    assert "stopped" in output
    assert "execution" in output and "job=" in output  # structured executor log line


def test_the_local_host_settles_messages_as_the_functions_host_does() -> None:
    """host.json's retry pause and dequeue limit; the 10-minute visibility of a taken
    message is the Functions host's own (not configurable in host.json)."""
    from devtools import devhost

    queues = json.loads((ROOT / "host.json").read_text())["extensions"]["queues"]
    hours, minutes, seconds = (int(part) for part in queues["visibilityTimeout"].split(":"))
    assert hours * 3600 + minutes * 60 + seconds == devhost.RETRY_VISIBILITY
    assert queues["maxDequeueCount"] == devhost.MAX_DEQUEUE_COUNT
    assert devhost.VISIBILITY_TIMEOUT == 600
