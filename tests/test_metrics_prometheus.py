"""End to end with a real Prometheus: jobs created through the real API run against a real
local HTTP target (three succeed, one fails) on two scheduler instances (two `Runtime`s,
each flushing its own counters), and Prometheus, scraping `GET /api/metrics` of one of them
with the bearer token, answers PromQL queries with the counts of both.

Time in the scheduler is the hand-moved clock; the only real waiting is for Prometheus's
next scrape (every second), polled through its HTTP API with a deadline.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from scheduler_lib.config import Settings
from scheduler_lib.execution.execute import ExecutionReport
from scheduler_lib.metrics_settings import MetricsSettings
from scheduler_lib.runtime import Runtime
from tests.support.api_server import ManualClock, serve
from tests.support.http_target import HttpTarget
from tests.support.prometheus import JOB, needs_prometheus, running_prometheus

pytestmark = [needs_prometheus, pytest.mark.slow]

TOKEN = "prometheus-scrape-token"
SUB, RG = "5f3c2a1e-0000-4000-8000-00000000abcd", "Ops-RG"
COLLECTION = (
    f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler/jobCollections/Nightly"
)


@pytest.fixture
def target() -> Iterator[HttpTarget]:
    with HttpTarget() as server:
        server.reply(500, "broken", path="/fail")
        yield server


def _run_visible(runtime: Runtime, count: int) -> list[ExecutionReport]:
    """Hand the execution queue's messages to `runtime` as the queue trigger does, until
    `count` ran (a message sent just now may take Azurite a moment to hand out)."""
    reports: list[ExecutionReport] = []
    deadline = time.monotonic() + 30
    while len(reports) < count and time.monotonic() < deadline:
        for received in runtime.queue.receive(max_messages=count, visibility_timeout=60):
            reports.append(runtime.execute(received.body, message_id=received.id, dequeue_count=1))
            runtime.queue.delete(received)
    assert len(reports) == count, reports
    return reports


def test_prometheus_scrapes_the_counts_of_every_instance(
    settings: Settings, target: HttpTarget, tmp_path: Path
) -> None:
    started = time.monotonic()
    opened = replace(settings, metrics=MetricsSettings(tokens=(TOKEN,)))
    clock = ManualClock(datetime(2026, 3, 4, 9, 0, tzinfo=UTC))
    first = Runtime(opened, clock=clock, sleep=clock.sleep)
    second = Runtime(opened, clock=clock, sleep=clock.sleep)  # another instance
    first.ensure_storage()
    with (
        serve(first.api) as server,
        httpx.Client(
            base_url=server.api_url,
            headers={"Authorization": "Bearer test-key"},
            params={"api-version": "2016-03-01"},
            timeout=30,
        ) as api,
    ):

        def put_job(name: str, path: str) -> None:
            body = {"properties": {"action": {
                "type": "Http", "request": {"uri": target.url_for(path), "method": "GET"},
                "retryPolicy": {"retryType": "None"},
            }}}  # fmt: skip
            answer = api.put(f"{COLLECTION}/jobs/{name}", json=body)
            assert answer.status_code in (200, 201), answer.text

        assert api.put(COLLECTION, json={"location": "westeurope"}).status_code in (200, 201)
        for name in ("Ok-1", "Ok-2"):  # one-off jobs without startTime run at once
            put_job(name, "/ok")
        ran = _run_visible(first, 2)
        put_job("Ok-3", "/ok")
        put_job("Broken", "/fail")
        ran += _run_visible(second, 2)
        assert sorted(r.history.status for r in ran if r.history) == [
            "Completed", "Completed", "Completed", "Failed",
        ]  # fmt: skip
        first.flush_metrics(due_only=False)
        second.flush_metrics(due_only=False)
        ready = time.monotonic()

        host = server.base_url.removeprefix("http://")
        with running_prometheus(host, TOKEN, tmp_path) as prometheus:
            waited = prometheus.wait_for(f'up{{job="{JOB}"}}', 1)
            completed = 'sum(scheduler_occurrences_total{outcome="Completed"})'
            waited += prometheus.wait_for(completed, 3)
            prometheus.wait_for('sum(scheduler_occurrences_total{outcome="Faulted"})', 1)
            prometheus.wait_for('sum(scheduler_attempts_total{outcome="Failed"})', 1)
            prometheus.wait_for(
                'sum(scheduler_occurrences_total{collection="nightly",action_type="Http"})', 4
            )
            prometheus.wait_for("sum(scheduler_action_duration_seconds_count)", 4)
            prometheus.wait_for("sum(scheduler_start_lateness_seconds_count)", 4)
            prometheus.wait_for("scheduler_metrics_instances", 2)
            prometheus.wait_for('scheduler_queue_messages{queue="execution"}', 0)
    print(  # what the report quotes: -s shows it
        f"\nprometheus e2e: jobs ran and flushed in {ready - started:.1f}s, Prometheus saw the "
        f"first counts after {waited:.1f}s, whole test {time.monotonic() - started:.1f}s"
    )
