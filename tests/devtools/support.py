"""What the tests that start the local host (`python -m devtools.devhost`) in a process of its
own give it: the app settings of a test's storage, and the wait for its API."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import httpx

from devtools.azurite import Azurite
from scheduler_lib.config import Settings


def devhost_env(
    azurite: Azurite, settings: Settings, *, key: str = "k", **changes: str | None
) -> dict[str, str]:
    """The environment with the settings the host needs on this test's storage and `key` as
    its API key; `changes` set (a value) or remove (None) others."""
    env = {
        **os.environ,
        "AzureWebJobsStorage": azurite.connection_string,
        "SCHEDULER_API_KEYS": key,
        "SCHEDULER_STORAGE_PREFIX": settings.storage_prefix,
        "SCHEDULER_EXECUTION_QUEUE": settings.execution_queue_name,
        "SCHEDULER_DISPATCH_QUEUE": settings.dispatch_queue_name,
    }
    for name, value in changes.items():
        env.pop(name, None)
        if value is not None:
            env[name] = value
    return env


#: Seconds a host may take to serve its API: only bounds a hang. On a loaded 2-core machine
#: the interpreter's start-up and imports alone took most of a minute.
STARTUP = 180.0


def serving(base: str) -> bool:
    """The API answers and reaches its storage (Degraded until the first tick)."""
    try:
        return httpx.get(base + "/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def wait_serving(process: subprocess.Popen, base: str, *, output: Path | None = None) -> None:
    """Wait until the host `process` serves its API at `base`; fail at once, with what it
    printed (`output`, a file, or its stdout pipe), if it exited instead (a port another
    process took between `free_port` and the host's bind, a setting it refused)."""
    deadline = time.monotonic() + STARTUP
    while not serving(base):
        if process.poll() is not None:
            printed = output.read_text(errors="replace") if output else ""
            if process.stdout is not None:
                printed += process.stdout.read()
            raise AssertionError(f"the host exited ({process.returncode}): {printed[-3000:]}")
        assert time.monotonic() < deadline, f"the host did not serve {base} in {STARTUP} s"
        time.sleep(0.2)
