"""What Application Insights receives of the metrics, and so what the alert rules and the
workbook (infra/app/monitoring/) can query: the real Azure Monitor exporter
(azure-monitor-opentelemetry-exporter) on the global meter provider, as the Functions worker
sets it up, posting to a local ingestion endpoint that records the envelopes.

The queries read AppMetrics by `Name` (the instrument's name), `Properties` (its attributes)
and `Sum` (a counter's count since the last export): this shows the recorder's events arrive
so, the dispatcher's heartbeat included. Real Azurite for the recorder's label registry.
"""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest
from azure.monitor.opentelemetry.exporter import AzureMonitorMetricExporter
from opentelemetry import metrics as otel_metrics
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

from scheduler_lib.config import Settings
from scheduler_lib.domain import Outcome
from scheduler_lib.domain.outcomes import OccurrenceEnded
from scheduler_lib.metrics import MetricsRecorder, catalog
from scheduler_lib.store import TableStore

JOB = "sub|rg|nightly|backup"


class _Ingestion(BaseHTTPRequestHandler):
    """Application Insights' track endpoint: keeps every envelope, accepts them all."""

    envelopes: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        items = json.loads(body)
        type(self).envelopes.extend(items)
        answer = json.dumps({"itemsReceived": len(items), "itemsAccepted": len(items)})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(answer.encode())

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def exported() -> Iterator[PeriodicExportingMetricReader]:
    """The process-wide meter provider, exporting to a local endpoint on demand only."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Ingestion)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with pytest.MonkeyPatch.context() as env:
        env.setenv("APPLICATIONINSIGHTS_STATSBEAT_DISABLED_ALL", "true")
        env.setenv("APPLICATIONINSIGHTS_SDKSTATS_DISABLED", "true")
        exporter = AzureMonitorMetricExporter(
            connection_string="InstrumentationKey=00000000-0000-0000-0000-000000000000;"
            f"IngestionEndpoint=http://127.0.0.1:{server.server_address[1]}/",
            disable_offline_storage=True,
        )
        reader = PeriodicExportingMetricReader(exporter, export_interval_millis=10**9)
        otel_metrics.set_meter_provider(
            MeterProvider(metric_readers=[reader], shutdown_on_exit=False)
        )
        assert otel_metrics.get_meter_provider().__class__ is MeterProvider
        yield reader
    reader.shutdown()  # its last export, while the endpoint still answers: no later one
    server.shutdown()


def test_counters_arrive_under_their_catalog_names_with_their_attributes(
    exported: PeriodicExportingMetricReader, store: TableStore, settings: Settings
) -> None:
    _Ingestion.envelopes.clear()
    recorder = MetricsRecorder(store, settings)
    for outcome in (Outcome.COMPLETED, Outcome.POISONED, Outcome.POISONED):
        recorder.observe(OccurrenceEnded(JOB, "Http", outcome))
    recorder.tick_completed()

    exported.force_flush()

    points = [
        (metric["name"], metric["value"], envelope["data"]["baseData"].get("properties", {}))
        for envelope in _Ingestion.envelopes
        if envelope["data"]["baseType"] == "MetricData"
        for metric in envelope["data"]["baseData"]["metrics"]
    ]
    occurrences = {
        props[catalog.OUTCOME]: value
        for name, value, props in points
        if name == catalog.OCCURRENCES.otel
    }
    assert occurrences == {"Completed": 1, "Poisoned": 2}
    poisoned = next(
        props for name, _, props in points
        if name == catalog.OCCURRENCES.otel and props[catalog.OUTCOME] == "Poisoned"
    )  # fmt: skip
    assert set(catalog.OCCURRENCES.labels) <= set(poisoned)
    assert [(n, v) for n, v, _ in points if n == catalog.DISPATCHER_TICKS.otel] == [
        (catalog.DISPATCHER_TICKS.otel, 1)
    ]
