"""One instance's metrics: the events (`domain.outcomes`) recorded on OpenTelemetry
instruments, and flushed to the instance's row about once a minute.

Every event is recorded twice, in memory: on this recorder's own SDK `MeterProvider`, whose
`InMemoryMetricReader` is what a flush reads (the counters of this instance since it
started), and on the global meter, which is a no-op unless the process configured Azure
Monitor (`logs.configure_logging` locally, the Functions worker in Azure): then the same
instruments reach Application Insights as the logs do. No storage call is made per event
(but the first sight of a name while label places are left, `labels`).

A flush writes the row only when something was recorded, at most once per `FLUSH_EVERY`:
O(instances) writes a minute. When a flush is due is measured on `time.monotonic` (a
cadence, not a schedule instant, like the OAuth token cache's expiry); the row's
`FlushedAt` is the entry point's clock, read only when a flush writes.

If the row was folded meanwhile (this instance was frozen long enough to look dead,
`scrape.fold_stale`), the retired row holds what it last wrote; the recorder then starts a
row under a new key holding only what came since.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from opentelemetry import metrics as otel_metrics
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from scheduler_lib.config import Settings
from scheduler_lib.domain.outcomes import Event, OccurrenceEnded, collection_of, job_path
from scheduler_lib.metrics import catalog
from scheduler_lib.metrics.labels import LabelBudget, action_type_label
from scheduler_lib.metrics.snapshot import Snapshot
from scheduler_lib.store import INSTANCE_PREFIX, TableStore, save_instance_row
from scheduler_lib.timeutil import Clock

log = logging.getLogger(__name__)

#: How often an instance writes its row while it records.
FLUSH_EVERY = timedelta(seconds=60)


class _Instruments:
    """The catalog's counters and histograms on one meter."""

    def __init__(self, meter: Any) -> None:
        self.counters = {
            m.otel: meter.create_counter(m.otel, unit=m.unit, description=m.description)
            for m in catalog.COUNTERS
        }
        self.histograms = {
            m.otel: meter.create_histogram(
                m.otel,
                unit=m.unit,
                description=m.description,
                explicit_bucket_boundaries_advisory=list(m.bounds),
            )
            for m in catalog.HISTOGRAMS
        }


class MetricsRecorder:
    """Built once per worker by the runtime; `observe` is its observer of events."""

    def __init__(
        self,
        store: TableStore,
        settings: Settings,
        *,
        instance: str = "",
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self._monotonic = monotonic
        self._next_flush = monotonic() + FLUSH_EVERY.total_seconds()
        self.labels = LabelBudget(store, settings.metrics)
        self._reader = InMemoryMetricReader()
        # Nothing to export at exit (the reader is read by `flush`): no atexit hook per recorder.
        self._provider = MeterProvider(metric_readers=[self._reader], shutdown_on_exit=False)
        meters = (self._provider.get_meter(catalog.SCOPE), otel_metrics.get_meter(catalog.SCOPE))
        self._instruments = [_Instruments(meter) for meter in meters]
        self.instance = instance or uuid.uuid4().hex[:16]
        self._generation = 0
        self._etag: str | None = None
        self._written = Snapshot()  # cumulative, as of the last write of this row
        self._baseline = Snapshot()  # cumulative, as of the last fold of a row of this one
        self._dirty = False
        self._lock = threading.Lock()

    @property
    def row_key(self) -> str:
        suffix = f"-{self._generation}" if self._generation else ""
        return f"{INSTANCE_PREFIX}{self.instance}{suffix}"

    def observe(self, event: Event) -> None:
        """Record one event; never raises into the trigger that saw it."""
        try:
            self._record(event)
        except Exception:
            log.exception("metrics: could not record %s", type(event).__name__)

    def _record(self, event: Event) -> None:
        labels = {
            catalog.COLLECTION: self.labels.value(catalog.COLLECTION, collection_of(event.job_key)),
            catalog.ACTION_TYPE: action_type_label(event.action_type),
        }
        job = {catalog.JOB_NAME: self.labels.value(catalog.JOB_NAME, job_path(event.job_key))}
        for instruments in self._instruments:
            add, observe = instruments.counters, instruments.histograms
            if isinstance(event, OccurrenceEnded):
                outcome = {catalog.OUTCOME: event.outcome.value}
                add[catalog.OCCURRENCES.otel].add(1, {**labels, **job, **outcome})
                continue
            attempt = {catalog.ACTION: event.action, catalog.OUTCOME: event.status.value}
            add[catalog.ATTEMPTS.otel].add(1, {**labels, **job, **attempt})
            if event.attempt > 0:
                add[catalog.RETRIES.otel].add(1, {**labels, **job})
            observe[catalog.ACTION_DURATION.otel].record(event.duration, labels)
            if event.lateness is not None:
                observe[catalog.START_LATENESS.otel].record(event.lateness, labels)
        self._dirty = True

    def tick_completed(self) -> None:
        """Count one completed coordinator tick (the dispatcher's heartbeat). Azure Monitor
        receives it as the other counters; its absence is what the dispatcher-stalled alert
        sees, since a stalled or dead dispatcher cannot report its own age."""
        try:
            for instruments in self._instruments:
                instruments.counters[catalog.DISPATCHER_TICKS.otel].add(1)
            self._dirty = True
        except Exception:
            log.exception("metrics: could not count a dispatcher tick")

    def snapshot(self) -> Snapshot:
        """This instance's counters since it started (cumulative)."""
        return Snapshot.from_otel(self._reader.get_metrics_data())

    def flush_if_due(self, clock: Clock) -> bool:
        """Flush (at `clock()`) when something was recorded and `FLUSH_EVERY` has passed
        since the last flush (or since this recorder began)."""
        if not self._dirty or self._monotonic() < self._next_flush:
            return False
        self.flush(clock())
        return True

    def flush(self, now: datetime) -> None:
        """Write what this instance counted since its row began to its row."""
        with self._lock:
            self._dirty = False
            current = self.snapshot()
            try:
                etag = self._write(current, now)
            except Exception:
                self._dirty = True  # not written: the next flush tries again
                raise
            self._etag, self._written = etag, current
            self._next_flush = self._monotonic() + FLUSH_EVERY.total_seconds()

    def _write(self, current: Snapshot, now: datetime) -> str:
        row = current.minus(self._baseline).to_json()
        etag = save_instance_row(self.store, self.row_key, row, now=now, etag=self._etag)
        if etag is None and self._etag is not None:  # folded: go on under a new key
            self._baseline, self._generation = self._written, self._generation + 1
            row = current.minus(self._baseline).to_json()
            etag = save_instance_row(self.store, self.row_key, row, now=now, etag=None)
        if etag is None:
            raise RuntimeError(f"the metrics row {self.row_key} could not be written")
        return etag
