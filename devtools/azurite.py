"""Start and stop Azurite, the Azure Storage emulator (npm package pinned in package.json).

Used by the test suite (in-memory, on free ports, so a run leaves nothing behind) and by
`make run` (data kept under `.azurite/`, on the default ports, so jobs survive a restart).
It runs with `--skipApiVersionCheck` because the Python storage SDKs send API versions
newer than the 3.35 line of Azurite (the last that supports Node 20) knows.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from scheduler_lib.config import AZURITE_ACCOUNT, AZURITE_KEY

ROOT = Path(__file__).resolve().parents[1]
AZURITE_BIN = ROOT / "node_modules" / ".bin" / "azurite"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something accepts connections on `port`."""
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex((host, port)) == 0


def _wait_for_port(port: int, deadline: float) -> None:
    while time.monotonic() < deadline:
        if port_open(port):
            return
        time.sleep(0.05)
    raise TimeoutError(f"Azurite did not open port {port}")


@dataclass
class Azurite:
    """A running Azurite with its three service ports."""

    process: subprocess.Popen[bytes]
    blob_port: int
    queue_port: int
    table_port: int
    workdir: str

    @property
    def connection_string(self) -> str:
        return (
            "DefaultEndpointsProtocol=http;"
            f"AccountName={AZURITE_ACCOUNT};AccountKey={AZURITE_KEY};"
            f"BlobEndpoint=http://127.0.0.1:{self.blob_port}/{AZURITE_ACCOUNT};"
            f"QueueEndpoint=http://127.0.0.1:{self.queue_port}/{AZURITE_ACCOUNT};"
            f"TableEndpoint=http://127.0.0.1:{self.table_port}/{AZURITE_ACCOUNT};"
        )

    @property
    def queue_endpoint_template(self) -> str:
        """`SCHEDULER_STORAGE_QUEUE_ENDPOINT` value that sends Storage-queue actions here."""
        return f"http://127.0.0.1:{self.queue_port}/{{account}}"

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.workdir, ignore_errors=True)


def start_azurite(
    *,
    location: Path | None = None,
    ports: tuple[int, int, int] | None = None,
    options: tuple[str, ...] = (),
) -> Azurite:
    """Start Azurite and wait until all three services accept connections.

    Without `location` the data lives in memory; without `ports` it takes free ones
    (blob, queue, table). `options`: more of Azurite's command-line options (e.g. HTTPS and
    OAuth: `--cert`, `--key`, `--oauth basic`).
    """
    if not AZURITE_BIN.exists():
        raise RuntimeError(f"{AZURITE_BIN} is missing: run `npm ci` (make does it)")
    blob, queue, table = ports or (free_port(), free_port(), free_port())
    workdir = tempfile.mkdtemp(prefix="azurite-")
    storage = ["--location", str(location)] if location else ["--inMemoryPersistence"]
    process = subprocess.Popen(
        [
            str(AZURITE_BIN),
            "--silent",
            *storage,
            "--skipApiVersionCheck",
            "--disableTelemetry",
            "--loose",
            "--blobHost",
            "127.0.0.1",
            "--blobPort",
            str(blob),
            "--queueHost",
            "127.0.0.1",
            "--queuePort",
            str(queue),
            "--tableHost",
            "127.0.0.1",
            "--tablePort",
            str(table),
            *options,
        ],
        cwd=workdir,
        # Its own session: Ctrl-C in a terminal must stop the scheduler first, not the
        # storage it is still draining to; whoever started Azurite stops it afterwards.
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    try:
        for port in (blob, queue, table):
            _wait_for_port(port, deadline)
    except TimeoutError:
        process.kill()
        err = process.stderr.read().decode(errors="replace") if process.stderr else ""
        raise RuntimeError(f"Azurite failed to start: {err}") from None
    return Azurite(process, blob, queue, table, workdir)
