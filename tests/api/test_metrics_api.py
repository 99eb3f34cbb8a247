"""`GET /api/metrics` over real HTTP: its own bearer token (never an API key), 404 while
`SCHEDULER_METRICS_TOKEN` is unset, and the Prometheus text format of what the instances
flushed, parsed back with prometheus_client's own parser."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from scheduler_lib.api import create_app
from scheduler_lib.config import Settings
from scheduler_lib.domain import Outcome
from scheduler_lib.domain.outcomes import OccurrenceEnded
from scheduler_lib.metrics import MetricsRecorder
from scheduler_lib.metrics_settings import MetricsSettings
from scheduler_lib.store import TableStore, save_dispatcher_state
from scheduler_lib.store.dispatcher_state import DispatcherState
from tests.support.api_server import ApiServer, ManualClock, serve

TOKEN = "scrape-token-0123456789"


@pytest.fixture
def metrics_server(settings: Settings, clock: ManualClock) -> Iterator[ApiServer]:
    opened = replace(settings, metrics=MetricsSettings(tokens=("old-token", TOKEN)))
    with serve(create_app(opened, clock=clock)) as running:
        yield running


def _get(server: ApiServer, authorization: str | None = None) -> httpx.Response:
    headers = {"Authorization": authorization} if authorization else {}
    return httpx.get(server.api_url + "/metrics", headers=headers, timeout=30)


def test_without_the_setting_the_endpoint_does_not_exist(server: ApiServer) -> None:
    answer = _get(server, "Bearer test-key")  # not even with an API key
    key = {"Authorization": "Bearer test-key"}
    unknown = httpx.get(server.api_url + "/no-such-thing", headers=key, timeout=30)
    assert answer.status_code == unknown.status_code == 404
    assert answer.json()["error"] == {
        "code": "NotFound", "message": "No such route: GET /api/metrics",
    }  # fmt: skip


@pytest.mark.parametrize(
    "authorization",
    [None, "Bearer wrong", "Bearer test-key", f"Basic {TOKEN}", "Bearer", f"Bearer {TOKEN}x"],
    ids=["none", "wrong", "api-key", "basic", "empty", "longer"],
)
def test_a_scrape_without_the_token_is_refused(
    metrics_server: ApiServer, authorization: str | None
) -> None:
    answer = _get(metrics_server, authorization)
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"] == "Bearer"
    assert answer.json()["error"]["code"] == "AuthenticationFailed"
    assert TOKEN not in answer.text


def test_the_token_opens_the_metrics_and_nothing_else(
    metrics_server: ApiServer, settings: Settings, store: TableStore, clock: ManualClock
) -> None:
    recorder = MetricsRecorder(store.ready(), settings)
    for outcome in (Outcome.COMPLETED, Outcome.COMPLETED, Outcome.FAULTED):
        recorder.observe(OccurrenceEnded("sub|rg|nightly|backup", "Http", outcome))
    recorder.flush(clock.now)
    save_dispatcher_state(store, DispatcherState(None, clock.now - timedelta(seconds=42)))

    answer = _get(metrics_server, f"Bearer {TOKEN}")
    rotated = _get(metrics_server, "Bearer old-token")

    assert answer.status_code == rotated.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain; version=")
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(answer.text)
        for s in family.samples
    }
    occurrences = {
        dict(labels)["outcome"]: v
        for (name, labels), v in samples.items()
        if name == "scheduler_occurrences_total"
    }
    assert occurrences == {"Completed": 2, "Faulted": 1}
    assert samples[("scheduler_dispatcher_seconds_since_last_tick", ())] == 42
    assert samples[("scheduler_metrics_instances", ())] == 1
    queues = {dict(k)["queue"] for (n, k) in samples if n == "scheduler_queue_messages"}
    assert queues == {"execution", "dispatch", "poison"}
    # The token is no API key.
    api = httpx.get(
        metrics_server.api_url + "/subscriptions/s/providers/Microsoft.Scheduler/jobCollections",
        headers={"Authorization": f"Bearer {TOKEN}"},
        params={"api-version": "2016-03-01"},
        timeout=30,
    )
    assert api.status_code == 401
