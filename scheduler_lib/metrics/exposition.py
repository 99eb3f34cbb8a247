"""A scrape in the Prometheus text exposition format, written by `prometheus_client`'s own
metric families and `generate_latest` (escaping, `_total`, `le` and `+Inf` are its
business), from the summed rows rather than from a per-process registry: a process's own
counters would be one instance's share on Azure.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.metrics_core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector, CollectorRegistry
from prometheus_client.utils import floatToGoString

from scheduler_lib.metrics import catalog
from scheduler_lib.metrics.scrape import Scrape

#: The Content-Type of the answer (the text format's version, as prometheus_client writes it).
CONTENT_TYPE = CONTENT_TYPE_LATEST


class _ScrapeCollector(Collector):
    def __init__(self, scraped: Scrape) -> None:
        self.scraped = scraped

    def collect(self) -> Iterator[Metric]:
        counters = self.scraped.counters
        for metric in catalog.COUNTERS:
            labels = metric.labels
            family = CounterMetricFamily(metric.prometheus, metric.description, labels=labels)
            for key, value in sorted(counters.counters.get(metric.otel, {}).items()):
                family.add_metric(_values(metric, dict(key)), value)
            yield family
        for metric in catalog.HISTOGRAMS:
            histogram = HistogramMetricFamily(
                metric.prometheus, metric.description, labels=metric.labels, unit="seconds"
            )
            bounds = (*metric.bounds, float("inf"))
            for key, buckets in sorted(counters.histograms.get(metric.otel, {}).items()):
                cumulative, running = [], 0
                for bound, count in zip(bounds, buckets.counts, strict=True):
                    running += count
                    cumulative.append((floatToGoString(bound), running))
                histogram.add_metric(_values(metric, dict(key)), cumulative, buckets.total)
            yield histogram
        yield from self._gauges()

    def _gauges(self) -> Iterator[Metric]:
        gauges = self.scraped.gauges
        queues = catalog.QUEUE_MESSAGES
        family = GaugeMetricFamily(queues.prometheus, queues.description, labels=queues.labels)
        for name, depth in sorted(gauges.queue_messages.items()):
            family.add_metric([name], depth)
        yield family
        tick = catalog.SECONDS_SINCE_TICK
        family = GaugeMetricFamily(tick.prometheus, tick.description)
        if gauges.seconds_since_last_tick is not None:
            family.add_metric([], gauges.seconds_since_last_tick)
        yield family
        for metric, value in (
            (catalog.OVERDUE_JOBS, gauges.overdue_jobs),
            (catalog.INSTANCES, self.scraped.instances),
        ):
            yield GaugeMetricFamily(metric.prometheus, metric.description, value=value)


def _values(metric: catalog.Metric, labels: dict[str, str]) -> list[str]:
    return [labels.get(name, "") for name in metric.labels]


def render(scraped: Scrape) -> bytes:
    """The text exposition of one scrape."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_ScrapeCollector(scraped))
    return generate_latest(registry)
