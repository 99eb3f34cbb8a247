"""`python -m devtools.local_run` (what `make run` runs) as a user runs it, in its own
process: `--help` prints usage and starts nothing; a port already taken fails at once with one
line, before Azurite, storage or a dispatcher tick are touched. And the commands its banner
prints work as pasted."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time

import httpx

from devtools.azurite import ROOT, free_port
from devtools.devhost import worker_loop
from devtools.local_run import banner
from scheduler_lib.runtime import Runtime
from tests.devtools.support import STARTUP
from tests.support.api_server import serve

#: Bounded: before the fix both commands started the whole scheduler and never returned.
#: Only that hang: the imports (`devtools.devhost`, uvicorn, the Azure SDKs) took over 30 s
#: on a loaded machine (the same start-up as the host's, `support.STARTUP`).
TIMEOUT = STARTUP


def _local_run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "devtools.local_run", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def _env_without_storage() -> dict[str, str]:
    """A storage account nothing listens on: if the command got as far as storage it would
    log connection errors instead of the expected output (and no Azurite is started, since a
    connection string is set)."""
    closed = free_port()
    return {
        **os.environ,
        "SCHEDULER_API_KEYS": "local-run-test",
        "AzureWebJobsStorage": (
            "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;"
            f"TableEndpoint=http://127.0.0.1:{closed}/devstoreaccount1;"
            f"QueueEndpoint=http://127.0.0.1:{closed}/devstoreaccount1;"
        ),
    }


def test_help_prints_usage_and_starts_nothing():
    result = _local_run("--help", env=_env_without_storage())
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: python -m devtools.local_run")
    for option in ("--port", "--host", 'make run ARGS="--port 7072"'):
        assert option in result.stdout
    assert "Scheduler running" not in result.stdout and result.stderr == ""


def test_a_busy_port_fails_fast_with_one_clear_line():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = _local_run("--port", str(port), env=_env_without_storage())
    assert result.returncode != 0
    assert result.stdout == ""  # no banner, no Azurite, no tick logged
    [line] = result.stderr.splitlines()
    assert f"127.0.0.1:{port}" in line and "in use" in line
    assert f'make run ARGS="--port {port + 1}"' in line


def test_an_unknown_option_is_refused_before_anything_starts():
    result = _local_run("--prot", "7072", env=_env_without_storage())
    assert result.returncode == 2 and "unrecognized arguments: --prot" in result.stderr
    assert result.stdout == ""


def test_the_banner_commands_work_offline(settings):
    """What `make run` prints to paste: a collection, a job and its history, with curl. The
    job calls the scheduler's own health probe, so its first run succeeds without internet."""
    runtime = Runtime(settings)
    runtime.ensure_storage()
    stop = threading.Event()
    worker = threading.Thread(target=worker_loop, args=(runtime, stop), name="banner-worker")
    with serve(runtime.api) as running:
        worker.start()
        try:
            port = int(running.base_url.rsplit(":", 1)[1])
            text = banner(port, settings.api_keys[0])
            commands = text.split("Try it:\n", 1)[1].split("\n\n", 1)[0]
            result = subprocess.run(
                ["bash", "-ec", commands], capture_output=True, text=True, timeout=60
            )
            assert result.returncode == 0, result.stderr
            history_url = re.search(r"curl '([^']*/history[^']*)'", commands).group(1)
            deadline = time.monotonic() + 30
            entries = []
            while not entries and time.monotonic() < deadline:
                entries = httpx.get(
                    history_url, headers={"Authorization": f"Bearer {settings.api_keys[0]}"}
                ).json()["value"]
                time.sleep(0.2)
        finally:
            stop.set()
            worker.join(timeout=60)
    assert entries and entries[0]["properties"]["status"] == "Completed"


def test_the_banner_prints_the_dashboard_url():
    text = banner(7072, "k", "0.0.0.0")
    assert "Dashboard: http://127.0.0.1:7072/api/ui/" in text
