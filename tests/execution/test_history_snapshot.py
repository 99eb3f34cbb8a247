"""The executor writes an attempt's history entry in one storage request: the job entity it
claims and finishes anyway carries its snapshot of the history counter (`HistoryCounter`),
so the entry goes in the counter's transaction without reading it first. Against real
Azurite and a real local HTTP target; requests are counted by the cost benchmark's hook."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from scheduler_lib import storage_calls
from scheduler_lib.domain import JobRecord
from scheduler_lib.domain.executor_state import executor_state
from scheduler_lib.domain.history_counter import EMPTY_HISTORY
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution import claims
from scheduler_lib.service.job_schedule import restarted
from scheduler_lib.store.history import TABLE, add_history
from scheduler_lib.store.jobs import put_job
from scheduler_lib.store.partition_counter import COUNTER_ROW
from tests.execution.harness import T0, Driver, http_action, make_job
from tests.support.http_target import HttpTarget

EVERY_MINUTE = {"frequency": "Minute", "interval": 1}
#: The modules whose requests write (or read for) a history entry: the cap's transaction
#: and the counter's read and count.
HISTORY_STAGES = ("store.history_cap", "store.partition_counter")


@pytest.fixture
def counted(driver: Driver, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Driver:
    """The driver, its runtime's storage requests counted (set before the runtime exists)."""
    monkeypatch.setenv(storage_calls.COUNT_CALLS_SETTING, str(tmp_path / "calls.json"))
    return driver


@contextmanager
def history_requests() -> Iterator[list[int]]:
    """How many storage requests the history write made inside the block."""

    def total() -> int:
        counts = storage_calls.snapshot()
        return sum(n for stage, n in counts.items() if any(s in stage for s in HISTORY_STAGES))

    before, made = total(), []
    yield made
    made.append(total() - before)


def new_job(driver: Driver, target: HttpTarget) -> JobRecord:
    """A recurring job as the API creates it: its bookkeeping that of a new job."""
    job = make_job(
        driver.store, http_action(target.url), next_execution_time=T0, recurrence=EVERY_MINUTE
    )
    fresh = replace(restarted(None), occurrences=1)
    return put_job(driver.store, replace(job, bookkeeping=fresh), etag=job.etag)


def run(driver: Driver, job: JobRecord, number: int, **kwargs: object) -> str:
    due = T0 + timedelta(minutes=number - 1)
    driver.clock.now = due + timedelta(seconds=1)
    message = ExecutionMessage.scheduled(job.key, due, number)
    return driver.run(message, **kwargs).disposition  # type: ignore[arg-type]


def counter_count(driver: Driver, job: JobRecord) -> int:
    return int(driver.store.table(TABLE).get_entity(job.history_key, COUNTER_ROW)["Count"])


def test_a_new_job_starts_with_its_history_known_empty() -> None:
    assert restarted(None).executor is not None
    assert restarted(None).executor.history == EMPTY_HISTORY


def test_a_new_jobs_first_entry_is_one_request(counted: Driver, target: HttpTarget) -> None:
    job = new_job(counted, target)

    with history_requests() as made:
        assert run(counted, job, 1) == "Ran"

    assert made == [1]
    assert len(counted.history(job.key)) == counter_count(counted, job) == 1
    assert executor_state(counted.job(job.key)).history.count == 1  # type: ignore[union-attr]


def test_a_recurring_jobs_next_entry_is_one_request(counted: Driver, target: HttpTarget) -> None:
    job = make_job(  # stored before snapshots: its first entry reads the counter, once
        counted.store, http_action(target.url), next_execution_time=T0, recurrence=EVERY_MINUTE
    )
    assert run(counted, job, 1) == "Ran"

    for number in (2, 3):
        with history_requests() as made:
            assert run(counted, job, number) == "Ran"
        assert made == [1], number

    assert len(counted.history(job.key)) == counter_count(counted, job) == 3


def test_an_entry_written_by_another_path_meanwhile_is_counted(
    driver: Driver, target: HttpTarget
) -> None:
    job = new_job(driver, target)
    run(driver, job, 1)
    postponed = replace(driver.history(job.key)[0], status="Postponed", history_id=None)
    add_history(driver.store, postponed)  # the counter changed: the snapshot is stale

    assert run(driver, job, 2) == "Ran"
    assert run(driver, job, 3) == "Ran"

    assert len(driver.history(job.key)) == counter_count(driver, job) == 4


def test_a_crash_between_the_entry_and_the_finish_stays_exact(
    counted: Driver, target: HttpTarget, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker dies after the entry, before the job is written: the job keeps the
    snapshot the entry was written with. The redelivery records the attempt from its entry;
    the next attempt's write finds the snapshot stale, reads the counter, and counts right."""
    job = new_job(counted, target)

    def died(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the worker stopped")

    monkeypatch.setattr(claims, "finish", died)
    with pytest.raises(RuntimeError):
        run(counted, job, 1, message_id="m-1")
    monkeypatch.undo()
    assert executor_state(counted.job(job.key)).history == EMPTY_HISTORY  # not stored
    assert run(counted, job, 1, message_id="m-1", dequeue_count=2) == "Recorded"

    assert run(counted, job, 2) == "Ran"  # a stale snapshot: the counter is read
    with history_requests() as made:
        assert run(counted, job, 3) == "Ran"  # and its result is the snapshot again

    assert made == [1] and len(target.requests) == 3
    assert len(counted.history(job.key)) == counter_count(counted, job) == 3
