"""Job replaces of one partition at the same moment go out as one entity-group transaction
(`group_commit`, `store/grouped_writes.py`), each caller seeing what its lone write would.

Real Azurite, real threads. The moment is made certain rather than left to timing: the
first write of a partition (sent alone) is held in flight until the writes the test
starts after it are all waiting behind it (`GroupCommit.waiting`), each started only once
the one before it waits, so the order of the queue is the test's. The requests are
counted by the cost benchmark's hook (`counting`); every thread is joined before anything
is asserted.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from scheduler_lib import storage_calls
from scheduler_lib.config import Settings
from scheduler_lib.domain import JobDefinition, JobRecord
from scheduler_lib.errors import NotFoundError, PreconditionFailedError
from scheduler_lib.store import grouped_writes
from scheduler_lib.store.jobs import TABLE, delete_job, find_job, put_job
from scheduler_lib.store.tables import TableStore

CREATED = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)


def _job(name: str, collection: str = "Coll") -> JobRecord:
    definition = {"action": {"type": "Http", "request": {"uri": "http://x", "method": "GET"}}}
    return JobRecord("Sub", "RG", collection, name, JobDefinition(definition), CREATED)


def _until(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    """Wait for a state the threads reach (not for a schedule): fail after `timeout`."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the writes never got there"
        time.sleep(0.002)


def _requests() -> dict[str, int]:
    """Table requests counted so far: transactions (`batch`) and the rest (`single`)."""
    counts = {"batch": 0, "single": 0}
    for stage, number in storage_calls.snapshot().items():
        if "[table batch" in stage:
            counts["batch"] += number
        elif "[table " in stage:
            counts["single"] += number
    return counts


def _since(before: dict[str, int]) -> dict[str, int]:
    return {kind: number - before[kind] for kind, number in _requests().items()}


@pytest.fixture
def grouped(settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> TableStore:
    """A worker's store (`group_writes`), its requests counted, its tables created."""
    monkeypatch.setenv(storage_calls.COUNT_CALLS_SETTING, str(tmp_path / "calls.json"))
    store = TableStore(settings, group_writes=True)
    store.ensure_tables()
    return store


def _key(store: TableStore, record: JobRecord) -> tuple[str, str]:
    return (store.settings.table_name(TABLE), record.collection_key)


@pytest.fixture
def hold(grouped: TableStore, monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """`hold(record, waiting)`: the next lone write of `record`'s partition stays in flight
    until `waiting` writes of that partition wait behind it (then it is sent for real)."""
    real = grouped_writes.write_entity
    held: dict[tuple[str, str], int] = {}

    def write(table: Any, entity: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        key = (table.table_name, entity["PartitionKey"])
        waiting = held.pop(key, 0)
        assert grouped.writes is not None
        _until(lambda: grouped.writes.waiting(key) >= waiting)  # type: ignore[union-attr]  # checked above
        return real(table, entity, **kwargs)

    monkeypatch.setattr(grouped_writes, "write_entity", write)

    def arm(record: JobRecord, waiting: int) -> None:
        held[_key(grouped, record)] = waiting

    return arm


class _Writers:
    """Writes started one after another in threads; each one's result or exception."""

    def __init__(self, store: TableStore) -> None:
        self.store = store
        self.threads: list[threading.Thread] = []
        self.outcomes: dict[int, JobRecord | Exception] = {}

    def start(self, record: JobRecord, etag: str | None, *, queued: int | None = None) -> int:
        """Start `put_job(record, etag)`; with `queued`, return once that many writes of
        its partition wait (it is among them)."""
        number = len(self.threads)

        def run() -> None:
            try:
                self.outcomes[number] = put_job(self.store, record, etag=etag)
            except Exception as exc:
                self.outcomes[number] = exc

        thread = threading.Thread(target=run, name=f"writer{number}")
        self.threads.append(thread)
        thread.start()
        if queued is not None:
            assert self.store.writes is not None
            key = _key(self.store, record)
            _until(lambda: self.store.writes.waiting(key) >= queued)  # type: ignore[union-attr]  # checked above
        return number

    def join(self) -> dict[int, JobRecord | Exception]:
        for thread in self.threads:
            thread.join(60)
            assert not thread.is_alive()
        return self.outcomes


@pytest.fixture
def writers(grouped: TableStore) -> Iterator[_Writers]:
    started = _Writers(grouped)
    yield started
    started.join()


def _created(store: TableStore, count: int, collection: str = "Coll") -> list[JobRecord]:
    return [put_job(store, _job(f"job-{i}", collection), create_only=True) for i in range(count)]


def test_writes_waiting_at_once_go_out_as_one_transaction_each_with_its_own_etag(
    grouped: TableStore, hold: Callable[..., None], writers: _Writers
) -> None:
    jobs = _created(grouped, 6)
    before = _requests()
    hold(jobs[0], waiting=5)

    for number, job in enumerate(jobs):
        changed = replace(job, execution_count=10 + number)
        writers.start(changed, job.etag, queued=number or None)
    outcomes = writers.join()

    assert _since(before) == {"single": 1, "batch": 1}  # the first alone, five in one
    for number, job in enumerate(jobs):
        saved = outcomes[number]
        assert isinstance(saved, JobRecord)
        stored = find_job(grouped, job.key)
        assert stored is not None and stored.execution_count == 10 + number
        assert saved.etag == stored.etag != job.etag
    assert grouped.writes is not None and grouped.writes.groups == 1


def _lone_error(store: TableStore, record: JobRecord, etag: str) -> Exception:
    """What a lone write (a store without group commit) raises for this write."""
    with pytest.raises(Exception) as raised:
        put_job(TableStore(store.settings), record, etag=etag)
    return raised.value


def test_an_etag_mismatch_in_a_group_reaches_its_caller_alone_as_a_lone_write_would(
    grouped: TableStore, hold: Callable[..., None], writers: _Writers
) -> None:
    jobs = _created(grouped, 6)
    stale, gone = jobs[2], jobs[4]
    put_job(grouped, replace(stale, execution_count=99), etag=stale.etag)  # someone else's
    delete_job(grouped, gone)
    hold(jobs[0], waiting=5)

    for number, job in enumerate(jobs):
        writers.start(replace(job, execution_count=number + 1), job.etag, queued=number or None)
    outcomes = writers.join()

    mismatch, missing = outcomes[2], outcomes[4]
    assert isinstance(mismatch, PreconditionFailedError)
    assert isinstance(missing, NotFoundError)
    lone_mismatch = _lone_error(grouped, stale, stale.etag or "")
    lone_missing = _lone_error(grouped, gone, gone.etag or "")
    assert type(mismatch) is type(lone_mismatch) and str(mismatch) == str(lone_mismatch)
    assert type(mismatch.__cause__) is type(lone_mismatch.__cause__)
    assert type(missing) is type(lone_missing)
    assert type(missing.__cause__) is type(lone_missing.__cause__)
    assert find_job(grouped, gone.key) is None
    assert find_job(grouped, stale.key).execution_count == 99  # type: ignore[union-attr]  # it exists
    for number in (0, 1, 3, 5):
        saved = outcomes[number]
        assert isinstance(saved, JobRecord)
        assert find_job(grouped, jobs[number].key) == saved  # written, its ETag returned


def test_two_writes_of_one_job_at_once_apply_in_order(
    grouped: TableStore, hold: Callable[..., None], writers: _Writers
) -> None:
    """The second write of a job waits for the round after the first's: conditional on the
    ETag both read, it loses to the first (as it would alone; known without a request,
    since the first replaced that ETag); unconditional, it lands last."""
    first, other = _created(grouped, 2)
    hold(first, waiting=4)
    before = _requests()

    writers.start(replace(first, execution_count=1), first.etag)  # in flight, held
    after_first = writers.start(replace(first, execution_count=2), first.etag, queued=1)
    writers.start(replace(other, execution_count=5), other.etag, queued=2)
    last = writers.start(replace(first, execution_count=3), None, queued=3)
    raced = writers.start(replace(first, execution_count=4), first.etag, queued=4)
    outcomes = writers.join()

    lone = _lone_error(grouped, first, first.etag or "")
    for lost in (outcomes[after_first], outcomes[raced]):
        assert type(lost) is type(lone) and str(lost) == str(lone)
        assert type(lost.__cause__) is type(lone.__cause__)
    # the first alone, then `other` and the unconditional one together; the two that
    # were bound to lose sent no request
    assert _since(before) == {"single": 2, "batch": 1}  # and the lone write just above
    stored = find_job(grouped, first.key)
    assert stored is not None and stored.execution_count == 3
    assert outcomes[last] == stored
    assert find_job(grouped, other.key).execution_count == 5  # type: ignore[union-attr]  # it exists


def test_partitions_never_share_a_transaction(
    grouped: TableStore, hold: Callable[..., None], writers: _Writers
) -> None:
    ours, theirs = _created(grouped, 3, "Ours"), _created(grouped, 3, "Theirs")
    hold(ours[0], waiting=2)
    hold(theirs[0], waiting=2)
    before = _requests()

    for jobs in (ours, theirs):
        for number, job in enumerate(jobs):
            changed = replace(job, execution_count=number + 1)
            writers.start(changed, job.etag, queued=number or None)
    outcomes = writers.join()

    assert all(isinstance(outcome, JobRecord) for outcome in outcomes.values())
    assert _since(before) == {"single": 2, "batch": 2}  # per partition: one alone, two in one
    for number, job in enumerate(ours + theirs):
        assert find_job(grouped, job.key).execution_count == number % 3 + 1  # type: ignore[union-attr]  # it exists


def test_writes_one_after_another_stay_plain_requests(grouped: TableStore) -> None:
    jobs = _created(grouped, 3)
    before = _requests()

    saved = [put_job(grouped, replace(job, execution_count=7), etag=job.etag) for job in jobs]

    assert _since(before) == {"single": 3, "batch": 0}
    assert [find_job(grouped, job.key) for job in jobs] == saved
    assert grouped.writes is not None and grouped.writes.groups == 0
