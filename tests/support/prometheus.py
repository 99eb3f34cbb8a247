"""A real Prometheus (Debian's `prometheus` package) scraping the scheduler, for the metrics
tests, or a loud skip saying why not (as `browser` does for Chromium).

    from tests.support.prometheus import needs_prometheus, running_prometheus
    pytestmark = needs_prometheus
    with running_prometheus("127.0.0.1:8080", token, tmp_path) as prometheus:
        prometheus.wait_for("sum(scheduler_occurrences_total)", 3)

It listens on a free loopback port with a config and a TSDB directory of its own in the
test's temporary directory, scrapes `/api/metrics` every second with the bearer token, and
is stopped (its own process, by its id) when the block ends.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from devtools.azurite import free_port

PROMETHEUS = shutil.which("prometheus") or (
    "/usr/bin/prometheus" if Path("/usr/bin/prometheus").exists() else None
)
#: Marks a module's tests to be skipped, with the reason in the summary, without Prometheus.
needs_prometheus = pytest.mark.skipif(
    PROMETHEUS is None,
    reason="PROMETHEUS TEST NOT RUN: Prometheus is not installed "
    "(`apt-get install -y prometheus`; .ci/run installs it)",
)
JOB = "scheduler"


@dataclass
class Prometheus:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def query(self, promql: str) -> list[dict[str, Any]]:
        """The instant vector of `promql` (its `result` list) from the HTTP API."""
        answer = httpx.get(f"{self.url}/api/v1/query", params={"query": promql}, timeout=10)
        answer.raise_for_status()
        return answer.json()["data"]["result"]

    def wait_for(self, promql: str, expected: float, *, timeout: float = 60.0) -> float:
        """Poll until `promql` (a single series) has the value `expected`, or fail at the
        deadline with what it had instead; returns the seconds it took."""
        started = time.monotonic()
        seen: list[dict[str, Any]] = []
        while time.monotonic() - started < timeout:
            seen = self.query(promql)
            if len(seen) == 1 and float(seen[0]["value"][1]) == expected:
                return time.monotonic() - started
            time.sleep(0.25)  # Prometheus scrapes every second: this waits for its scrape
        raise AssertionError(f"{promql}: wanted {expected}, Prometheus had {seen} ({self.log})")


@contextmanager
def running_prometheus(target: str, token: str, directory: Path) -> Iterator[Prometheus]:
    """Prometheus scraping `http://<target>/api/metrics` with `Authorization: Bearer`."""
    assert PROMETHEUS is not None
    config = directory / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        "scrape_configs:\n"
        f"  - job_name: {JOB}\n"
        "    metrics_path: /api/metrics\n"
        "    scrape_timeout: 1s\n"
        f"    authorization: {{type: Bearer, credentials: '{token}'}}\n"
        f"    static_configs: [{{targets: ['{target}']}}]\n"
    )
    port = free_port()
    log = directory / "prometheus.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [
                PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={directory / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn",
            ],
            stdout=output, stderr=subprocess.STDOUT,
        )  # fmt: skip
    prometheus = Prometheus(f"http://127.0.0.1:{port}", process, log)
    try:
        _wait_ready(prometheus)
        yield prometheus
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


def _wait_ready(prometheus: Prometheus, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if prometheus.process.poll() is not None:
            raise RuntimeError(f"prometheus exited: {prometheus.log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{prometheus.url}/-/ready", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"prometheus did not get ready: {prometheus.log.read_text()[-2000:]}")
