"""A snapshot of counters and histograms: what one instance flushes to its row, what the
retired row adds up, what a scrape sums. Series are keyed by their sorted label pairs.

Counts only grow, so the sum over rows of a series only grows while rows are added up or
folded into the retired row (`scrape.fold_stale`): Prometheus never sees a counter fall.
A snapshot is built from the OpenTelemetry SDK's own reader (`from_otel`): the recorder's
instruments are the counters, this only carries them to and from storage.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scheduler_lib.metrics.catalog import BY_OTEL, COUNTERS, HISTOGRAMS, Metric

log = logging.getLogger(__name__)
VERSION = 1

Series = tuple[tuple[str, str], ...]


def series(labels: Mapping[str, Any]) -> Series:
    return tuple(sorted((str(k), str(v)) for k, v in labels.items()))


@dataclass(frozen=True)
class Buckets:
    """One histogram series: how many values, their sum, and the count per bucket (one per
    bound of the metric, then one above the last: OpenTelemetry's shape, not cumulative)."""

    count: int
    total: float
    counts: tuple[int, ...]

    def combine(self, other: Buckets, sign: int = 1) -> Buckets:
        return Buckets(
            self.count + sign * other.count,
            self.total + sign * other.total,
            tuple(a + sign * b for a, b in zip(self.counts, other.counts, strict=True)),
        )


@dataclass
class Snapshot:
    counters: dict[str, dict[Series, float]] = field(default_factory=dict)
    histograms: dict[str, dict[Series, Buckets]] = field(default_factory=dict)

    def plus(self, other: Snapshot) -> Snapshot:
        return self._combined(other, 1)

    def minus(self, other: Snapshot) -> Snapshot:
        """What `self` (cumulative) added since `other` (an earlier cumulative state)."""
        return self._combined(other, -1)

    def _combined(self, other: Snapshot, sign: int) -> Snapshot:
        result = Snapshot(
            {name: dict(points) for name, points in self.counters.items()},
            {name: dict(points) for name, points in self.histograms.items()},
        )
        for name, points in other.counters.items():
            mine = result.counters.setdefault(name, {})
            for key, value in points.items():
                mine[key] = mine.get(key, 0) + sign * value
        for name, hpoints in other.histograms.items():
            hmine = result.histograms.setdefault(name, {})
            for key, buckets in hpoints.items():
                empty = Buckets(0, 0.0, (0,) * len(buckets.counts))
                hmine[key] = hmine.get(key, empty).combine(buckets, sign)
        return result

    def to_json(self) -> str:
        body = {
            "v": VERSION,
            "counters": {
                name: [[dict(key), value] for key, value in points.items() if value]
                for name, points in self.counters.items()
            },
            "histograms": {
                name: {
                    "bounds": list(BY_OTEL[name].bounds),
                    "series": [
                        [dict(key), b.count, b.total, list(b.counts)]
                        for key, b in points.items()
                        if b.count
                    ],
                }
                for name, points in self.histograms.items()
            },
        }
        return json.dumps(body, separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Snapshot:
        """A stored snapshot; a histogram stored with other bounds than the catalog's (a
        release changed them) is left out rather than added up bucket by wrong bucket."""
        body = json.loads(text or "{}")
        snapshot = cls()
        for name, points in body.get("counters", {}).items():
            snapshot.counters[name] = {series(labels): value for labels, value in points}
        for name, stored in body.get("histograms", {}).items():
            metric = BY_OTEL.get(name)
            if metric is None or tuple(stored["bounds"]) != metric.bounds:
                log.warning("metrics: %s was stored with other bucket bounds; left out", name)
                continue
            snapshot.histograms[name] = {
                series(labels): Buckets(count, total, tuple(counts))
                for labels, count, total, counts in stored["series"]
            }
        return snapshot

    @classmethod
    def from_otel(cls, data: Any) -> Snapshot:
        """The cumulative points of an `InMemoryMetricReader`'s `MetricsData` (or None)."""
        snapshot = cls()
        for metric in _metrics(data):
            known: Metric | None = BY_OTEL.get(metric.name)
            if known in COUNTERS:
                snapshot.counters[metric.name] = {
                    series(p.attributes or {}): p.value for p in metric.data.data_points
                }
            elif known in HISTOGRAMS:
                snapshot.histograms[metric.name] = {
                    series(p.attributes or {}): Buckets(p.count, p.sum, tuple(p.bucket_counts))
                    for p in metric.data.data_points
                }
        return snapshot


def _metrics(data: Any) -> Iterable[Any]:
    if data is None:
        return
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            yield from scope.metrics
