"""Several instances, one answer: each instance flushes its own row, a scrape sums the rows,
and the rows of instances that stopped are folded into one without any count falling or
counting twice. Real Azurite; each `MetricsRecorder` here is one instance."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from scheduler_lib.config import Settings
from scheduler_lib.domain import HistoryStatus, Outcome
from scheduler_lib.domain.outcomes import AttemptEnded, OccurrenceEnded
from scheduler_lib.metrics import STALE, MetricsRecorder, catalog, fold_stale
from scheduler_lib.metrics.scrape import add_rows
from scheduler_lib.store import RETIRED, TableStore, fold_row, metrics_rows
from tests.metrics.support import stored, value

NOW = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
JOB = "sub|rg|nightly|backup"


def _ran(recorder: MetricsRecorder, times: int, *, outcome: Outcome = Outcome.COMPLETED) -> None:
    for _ in range(times):
        recorder.observe(OccurrenceEnded(JOB, "Http", outcome))


def test_two_instance_rows_are_summed(store: TableStore, settings: Settings) -> None:
    first, second = MetricsRecorder(store, settings), MetricsRecorder(store, settings)
    _ran(first, 3)
    _ran(second, 4)
    _ran(second, 1, outcome=Outcome.FAULTED)
    started = NOW - timedelta(seconds=1)
    second.observe(
        AttemptEnded(JOB, "Http", "MainAction", 0, HistoryStatus.COMPLETED, started, NOW, started)
    )
    first.flush(NOW)
    second.flush(NOW)

    rows, _ = metrics_rows(store)
    assert sorted(r.row_key for r in rows) == sorted([first.row_key, second.row_key])
    total = stored(store, now=NOW)
    assert value(total, catalog.OCCURRENCES, outcome="Completed") == 7
    assert value(total, catalog.OCCURRENCES, outcome="Faulted") == 1
    assert value(total, catalog.ACTION_DURATION) == 1

    _ran(first, 2)  # a later flush replaces the row: cumulative, not added again
    first.flush(NOW + timedelta(minutes=1))
    assert value(stored(store, now=NOW), catalog.OCCURRENCES, outcome="Completed") == 9


def test_a_stopped_instance_is_folded_and_the_sum_never_falls(
    store: TableStore, settings: Settings
) -> None:
    gone, alive = MetricsRecorder(store, settings), MetricsRecorder(store, settings)
    _ran(gone, 5)
    gone.flush(NOW)
    _ran(alive, 2)
    alive.flush(NOW + STALE)

    later = NOW + STALE + timedelta(minutes=1)
    assert fold_stale(store, now=later) == 1  # only the row not flushed for STALE
    rows, _ = metrics_rows(store)
    assert sorted(r.row_key for r in rows) == sorted([RETIRED, alive.row_key])
    assert value(stored(store, now=later), catalog.OCCURRENCES) == 7
    assert fold_stale(store, now=later) == 0
    assert value(stored(store, now=later), catalog.OCCURRENCES) == 7


def test_an_instance_folded_while_frozen_goes_on_without_counting_twice(
    store: TableStore, settings: Settings
) -> None:
    frozen = MetricsRecorder(store, settings)
    _ran(frozen, 5)
    frozen.flush(NOW)
    fold_stale(store, now=NOW + STALE + timedelta(seconds=1))  # it looked dead
    _ran(frozen, 2)  # it wakes up and counts on

    frozen.flush(NOW + STALE + timedelta(minutes=2))

    rows, _ = metrics_rows(store)
    assert len(rows) == 2 and frozen.row_key.endswith("-1")  # a new row beside the retired
    assert value(stored(store, now=NOW), catalog.OCCURRENCES) == 7


def test_a_fold_interrupted_between_its_writes_counts_once(
    store: TableStore, settings: Settings
) -> None:
    """The retired row already holds the row (the fold died before deleting it): a scrape
    leaves the row out, the next fold deletes it without adding it again."""
    gone = MetricsRecorder(store, settings)
    _ran(gone, 3)
    gone.flush(NOW)
    [row], _ = metrics_rows(store)

    fold_row(store, row, add_rows)
    store.table("SchedulerState").upsert_entity(  # the row as it was before the delete
        {"PartitionKey": "metrics", "RowKey": row.row_key, "Snapshot": row.snapshot,
         "FlushedAt": NOW}
    )  # fmt: skip
    assert value(stored(store, now=NOW), catalog.OCCURRENCES) == 3
    fold_stale(store, now=NOW)
    assert value(stored(store, now=NOW), catalog.OCCURRENCES) == 3
    assert [r.row_key for r in metrics_rows(store)[0]] == [RETIRED]


def test_label_places_are_shared_by_instances_and_bounded(
    store: TableStore, settings: Settings
) -> None:
    bounded = replace(
        settings, metrics=replace(settings.metrics, collection_labels=2, job_labels=1)
    )
    first, second = MetricsRecorder(store, bounded), MetricsRecorder(store, bounded)
    jobs = [f"sub|rg|coll{i}|job{i}" for i in range(5)]
    for index, key in enumerate(jobs):  # each job runs once on each instance, interleaved
        for recorder in (first, second) if index % 2 else (second, first):
            recorder.observe(OccurrenceEnded(key, "Http", Outcome.COMPLETED))
    first.flush(NOW)
    second.flush(NOW)

    total = stored(store, now=NOW)
    series = total.counters[catalog.OCCURRENCES.otel]
    assert {dict(k)["collection"] for k in series} == {"coll0", "coll1", "other"}
    assert {dict(k)["job_name"] for k in series} == {"coll0/job0", "other"}
    assert value(total, catalog.OCCURRENCES, collection="coll0") == 2  # both instances' runs
    assert value(total, catalog.OCCURRENCES, collection="coll1") == 2
    assert value(total, catalog.OCCURRENCES, collection="other") == 6
    assert sum(series.values()) == 10


def test_without_job_places_no_job_name_and_no_registry_call(
    store: TableStore, settings: Settings
) -> None:
    closed = replace(settings, metrics=replace(settings.metrics, collection_labels=0))
    recorder = MetricsRecorder(store, closed)
    for i in range(20):
        recorder.observe(OccurrenceEnded(f"sub|rg|c{i}|j{i}", "NotAType", Outcome.COMPLETED))
    recorder.flush(NOW)

    _, labels = metrics_rows(store)
    assert labels == {}  # nothing was registered
    series = stored(store, now=NOW).counters[catalog.OCCURRENCES.otel]
    assert list(series) == [
        (("action_type", "other"), ("collection", "other"), ("job_name", "other"),
         ("outcome", "Completed")),
    ]  # fmt: skip
    assert series[next(iter(series))] == 20
