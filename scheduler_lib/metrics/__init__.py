"""Metrics: counters of what the scheduler did, and `GET /api/metrics` for Prometheus.

`catalog` defines every metric once; `recorder` records the dispatcher's and the executor's
events (`domain.outcomes`) on OpenTelemetry instruments (exported to Azure Monitor when the
process configured it) and flushes the instance's counters to its row about once a minute;
`scrape` sums the rows of every instance and reads the gauges from storage when asked;
`exposition` writes that in the Prometheus text format; `labels` bounds the label values.
docs/metrics.md lists the metrics and the settings.
"""

from scheduler_lib.metrics.catalog import ALL, Kind, Metric
from scheduler_lib.metrics.exposition import CONTENT_TYPE, render
from scheduler_lib.metrics.labels import OTHER, LabelBudget
from scheduler_lib.metrics.recorder import FLUSH_EVERY, MetricsRecorder
from scheduler_lib.metrics.scrape import (
    DISPATCH,
    EXECUTION,
    POISON,
    STALE,
    Gauges,
    Scrape,
    fold_stale,
    scrape,
    summed,
)
from scheduler_lib.metrics.snapshot import Snapshot

__all__ = [
    "ALL",
    "CONTENT_TYPE",
    "DISPATCH",
    "EXECUTION",
    "FLUSH_EVERY",
    "OTHER",
    "POISON",
    "STALE",
    "Gauges",
    "Kind",
    "LabelBudget",
    "Metric",
    "MetricsRecorder",
    "Scrape",
    "Snapshot",
    "fold_stale",
    "render",
    "scrape",
    "summed",
]
