"""The history cap enforced at write time, against real Table storage: a job never holds more
than `keep` entries, the newest ones, and a write does not read the partition to get there
(only every `REMEMBERED` writes, or after someone else deleted entries)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest

from scheduler_lib.store.history import (
    HISTORY_KEEP,
    TABLE,
    add_history,
    list_history,
    prune_history,
)
from scheduler_lib.store.history_cap import REMEMBERED
from scheduler_lib.store.partition_counter import COUNTER_ROW
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


def _add(store: TableStore, minute: int, *, keep: int) -> None:
    add_history(store, entry(minute), keep=keep)


def test_the_documented_cap_is_1000() -> None:
    assert HISTORY_KEEP == 1000


@pytest.mark.parametrize("keep", [1, 5, 20])
def test_a_job_never_holds_more_than_the_newest_keep(store: TableStore, keep: int) -> None:
    writes = keep + REMEMBERED + 30  # past the cap, and past one set of remembered ids
    for minute in range(writes):
        _add(store, minute, keep=keep)
        assert len(messages(store)) == min(minute + 1, keep)

    assert messages(store) == newest(writes - keep, writes - 1)
    assert counted(store) == keep


def test_history_stored_before_the_cap_is_trimmed_by_the_next_write(store: TableStore) -> None:
    for minute in range(30):
        _add(store, minute, keep=HISTORY_KEEP)
    store.table(TABLE).delete_entity(KEY, COUNTER_ROW)  # as stored by an older version

    _add(store, 30, keep=5)

    assert messages(store) == newest(26, 30) and counted(store) == 5


def test_entries_deleted_by_housekeeping_meanwhile_do_not_stop_writes(store: TableStore) -> None:
    for minute in range(8):
        _add(store, minute, keep=5)
    # Housekeeping prunes the oldest ones (retention), some of them remembered for deletion.
    prune_history(store, KEY, keep=5, older_than=T0 + timedelta(minutes=5))

    for minute in range(8, 12):
        _add(store, minute, keep=5)

    assert messages(store) == newest(7, 11)


def test_the_count_never_shows_up_as_an_entry(store: TableStore) -> None:
    _add(store, 0, keep=HISTORY_KEEP)
    page, token = list_history(store, KEY, page_size=1)
    assert [e.message for e in page] == ["#0"]
    assert token is None or list_history(store, KEY, page_size=1, continuation=token)[0] == []


def test_a_remembered_entry_deleted_by_someone_else_is_not_a_stuck_write(
    store: TableStore,
) -> None:
    for minute in range(6):
        _add(store, minute, keep=5)  # full: the counter remembers the oldest ids
    oldest = list_history(store, KEY, page_size=1000)[0][-1]
    store.table(TABLE).delete_entity(KEY, oldest.history_id)  # not through this module

    _add(store, 6, keep=5)

    assert messages(store) == newest(2, 6)


def test_a_jobs_first_entry_costs_three_storage_requests_and_a_later_one_two(
    counting: TableStore,
) -> None:
    """Counted by the cost benchmark's hook on real requests. A one-time job's only entry is
    its first: initialising the counter before writing (read, count, create, read again,
    write) cost five."""
    assert requests_of(lambda: _add(counting, 0, keep=5))[0] == 3  # read, count, write
    assert requests_of(lambda: _add(counting, 1, keep=5))[0] == 2  # read, write
    assert messages(counting) == newest(0, 1) and counted(counting) == 2


@pytest.mark.parametrize("keep", [3, HISTORY_KEEP])
def test_racing_first_entries_are_all_counted(store: TableStore, keep: int) -> None:
    writers = 8
    together = threading.Barrier(writers)

    def write(minute: int) -> None:
        together.wait(timeout=30)
        _add(store, minute, keep=keep)

    with ThreadPoolExecutor(writers) as pool:
        list(pool.map(write, range(writers)))

    assert len(messages(store)) == counted(store) == min(writers, keep)
