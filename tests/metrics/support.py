"""Reading counters back the way a scrape does: flushed rows summed (`metrics.scrape`).

Not a test module. `value(snapshot, metric, **labels)` adds up the series of `metric` whose
labels include `labels` (a PromQL `sum(metric{labels})`).
"""

from __future__ import annotations

from datetime import datetime

from scheduler_lib.metrics import Snapshot, summed
from scheduler_lib.metrics.catalog import Metric
from scheduler_lib.store import TableStore, metrics_rows


def stored(store: TableStore, *, now: datetime) -> Snapshot:
    """Every flushed row added up, as a scrape at `now` sums them."""
    rows, _ = metrics_rows(store)
    total, _ = summed(rows, now=now)
    return total


def value(snapshot: Snapshot, metric: Metric, **labels: str) -> float:
    """The sum of `metric`'s series (a histogram: its count) whose labels include `labels`."""
    wanted = set(labels.items())
    counters = snapshot.counters.get(metric.otel, {})
    total = sum(v for key, v in counters.items() if wanted <= set(key))
    buckets = snapshot.histograms.get(metric.otel, {})
    return total + sum(b.count for key, b in buckets.items() if wanted <= set(key))


def label_values(snapshot: Snapshot, metric: Metric, label: str) -> set[str]:
    points = {**snapshot.counters.get(metric.otel, {}), **snapshot.histograms.get(metric.otel, {})}
    return {dict(key)[label] for key in points}
