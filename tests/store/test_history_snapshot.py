"""History written with the executor's snapshot of the counter (`HistoryCounter`), against
real Table storage: one request per entry while the snapshot holds, the cap exact at `keep`,
and any snapshot gone stale (another writer, housekeeping, a write whose snapshot was never
stored) still writes its entry and keeps the count exact."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest
from azure.core.exceptions import ServiceResponseError

from scheduler_lib.domain.history_counter import EMPTY_HISTORY, HistoryCounter
from scheduler_lib.store.changeset import Changesets
from scheduler_lib.store.history import (
    HISTORY_KEEP,
    add_counted_history,
    add_history,
    prune_history,
)
from scheduler_lib.store.history_cap import REMEMBERED
from scheduler_lib.store.tables import TableStore
from tests.store.history_support import (
    KEY,
    T0,
    counted,
    entry,
    messages,
    newest,
    requests_of,
)


def _add(
    store: TableStore, minute: int, known: HistoryCounter | None, *, keep: int
) -> HistoryCounter | None:
    return add_counted_history(store, entry(minute), known=known, keep=keep)[1]


def test_a_new_jobs_entries_cost_one_request_each(counting: TableStore) -> None:
    known: HistoryCounter | None = EMPTY_HISTORY
    for minute in range(4):
        requests, known = requests_of(lambda m=minute, k=known: _add(counting, m, k, keep=5))
        assert requests == 1, minute
    assert isinstance(known, HistoryCounter) and known.count == 4
    assert messages(counting) == newest(0, 3) and counted(counting) == 4


@pytest.mark.parametrize("keep", [5, 20])
def test_the_cap_stays_exact_with_snapshots(counting: TableStore, keep: int) -> None:
    writes = keep + REMEMBERED + 30  # past the cap, and past one set of remembered ids
    known: HistoryCounter | None = EMPTY_HISTORY
    reading = 0  # writes that needed more than the transaction (trimming by a partition read)
    for minute in range(writes):
        requests, known = requests_of(lambda m=minute, k=known: _add(counting, m, k, keep=keep))
        reading += requests > 1
        assert len(messages(counting)) == min(minute + 1, keep)
    assert messages(counting) == newest(writes - keep, writes - 1)
    assert counted(counting) == keep and known is not None and known.count == keep
    # Only once the remembered ids ran out: every `keep - 1` writes for a keep this small.
    assert reading <= writes // (keep - 1) + 1


def test_a_snapshot_gone_stale_still_writes_and_counts_exactly(store: TableStore) -> None:
    known = _add(store, 0, EMPTY_HISTORY, keep=5)
    add_history(store, entry(1), keep=5)  # another writer (a postponement, a pause entry)

    fresh = _add(store, 2, known, keep=5)

    assert messages(store) == newest(0, 2) and counted(store) == 3
    assert fresh is not None and fresh.count == 3
    _add(store, 3, fresh, keep=5)  # and the snapshot it gave back holds
    assert counted(store) == 4


def test_a_known_empty_history_someone_wrote_first_is_counted(store: TableStore) -> None:
    add_history(store, entry(0), keep=5)  # e.g. the dispatcher postponed its first occurrence

    _add(store, 1, EMPTY_HISTORY, keep=5)

    assert messages(store) == newest(0, 1) and counted(store) == 2


def test_a_snapshot_never_stored_does_not_count_twice(store: TableStore) -> None:
    """A crash between the entry and the finish: the job keeps the snapshot the entry was
    written with, and the next entry uses it again."""
    kept = _add(store, 0, EMPTY_HISTORY, keep=3)
    _add(store, 1, kept, keep=3)  # written; its snapshot lost with the worker

    for minute in range(2, 6):
        _add(store, minute, kept, keep=3)

    assert messages(store) == newest(3, 5) and counted(store) == 3


def test_housekeeping_meanwhile_makes_a_snapshot_stale_not_wrong(store: TableStore) -> None:
    known = None
    for minute in range(8):
        known = _add(store, minute, known, keep=5)
    prune_history(store, KEY, keep=5, older_than=T0 + timedelta(minutes=5))  # 5 and later stay

    for minute in range(8, 12):
        known = _add(store, minute, known, keep=5)

    assert messages(store) == newest(7, 11) and counted(store) == 5


@pytest.mark.parametrize("keep", [3, HISTORY_KEEP])
def test_racing_writers_with_the_same_snapshot_are_all_counted(
    store: TableStore, keep: int
) -> None:
    known = _add(store, 0, EMPTY_HISTORY, keep=keep)
    writers = 8
    together = threading.Barrier(writers)

    def write(minute: int) -> None:
        together.wait(timeout=30)
        _add(store, minute, known, keep=keep)

    with ThreadPoolExecutor(writers) as pool:
        list(pool.map(write, range(1, writers + 1)))

    assert len(messages(store)) == counted(store) == min(writers + 1, keep)


@pytest.mark.parametrize("rounds", range(3))
def test_racing_writers_into_a_full_history_keep_the_count_exact(
    store: TableStore, rounds: int
) -> None:
    """Without snapshots too: a write that trims the partition (its remembered ids ran out)
    deleted what its read showed even when a racing writer had counted an entry meanwhile,
    leaving the count above the entries."""
    add_history(store, entry(0), keep=3)
    writers = 8
    together = threading.Barrier(writers)

    def write(minute: int) -> None:
        together.wait(timeout=30)
        add_history(store, entry(minute), keep=3)

    with ThreadPoolExecutor(writers) as pool:
        list(pool.map(write, range(1, writers + 1)))

    assert len(messages(store)) == counted(store) == 3


@pytest.mark.parametrize("applied", [True, False])
def test_a_transaction_left_without_answer_writes_the_entry_once(
    store: TableStore, monkeypatch: pytest.MonkeyPatch, applied: bool
) -> None:
    """The connection drops under the snapshot's transaction (a stale pooled connection: the
    SDK does not send a POST again), after storage applied it or before it got there: the
    entry is written once and counted once, and the write does not fail (a failed write
    is redelivered and, without its entry, runs its action again)."""
    known = _add(store, 0, EMPTY_HISTORY, keep=5)
    real = Changesets.submit  # what the store's TableClient.submit_transaction sends with
    dropped: list[bool] = []

    def dropping(self: Changesets, *args: Any, **kwargs: Any) -> Any:
        if dropped:
            return real(self, *args, **kwargs)
        dropped.append(True)
        if applied:
            real(self, *args, **kwargs)
        raise ServiceResponseError("Connection aborted.")

    monkeypatch.setattr(Changesets, "submit", dropping)
    _add(store, 1, known, keep=5)
    monkeypatch.undo()

    assert dropped and messages(store) == newest(0, 1) and counted(store) == 2


def test_a_snapshot_reads_back_as_written() -> None:
    counter = HistoryCounter(7, ("a", "b"), "W/\"datetime'2026'\"")
    assert HistoryCounter.from_stored(counter.to_stored()) == counter
    assert HistoryCounter.from_stored(EMPTY_HISTORY.to_stored()) == EMPTY_HISTORY
