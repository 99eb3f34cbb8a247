"""What the history tests share (`test_history_cap.py`, `test_history_snapshot.py`): one
job's partition, its entries one a minute from `T0` (the message `#<minute>`), how to read
back what it holds, and how many storage requests a write cost (the `counting` fixture of
tests/store/conftest.py is the store whose requests are counted)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from scheduler_lib import storage_calls
from scheduler_lib.store.history import TABLE, HistoryEntry, list_history
from scheduler_lib.store.partition_counter import COUNTER_ROW
from scheduler_lib.store.tables import TableStore

T = TypeVar("T")
T0 = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
KEY = "s|r|c|job"  # each test has its own tables (tests/conftest.py), so one key serves all


def entry(minute: int) -> HistoryEntry:
    """The entry of the occurrence `minute` minutes after `T0`, its message `#<minute>`."""
    start = T0 + timedelta(minutes=minute)
    return HistoryEntry(KEY, start, start, start, "MainAction", "Completed", f"#{minute}")


def messages(store: TableStore) -> list[str]:
    """The messages of the entries stored, newest first."""
    entries, _ = list_history(store, KEY, page_size=1000)
    return [e.message for e in entries]


def newest(first: int, last: int) -> list[str]:
    """`messages` when the entries of minutes `first` to `last` are the ones kept."""
    return [f"#{m}" for m in range(last, first - 1, -1)]


def counted(store: TableStore) -> int:
    """The partition's counter: how many entries it says it holds."""
    return int(store.table(TABLE).get_entity(KEY, COUNTER_ROW)["Count"])


def requests_of(write: Callable[[], T]) -> tuple[int, T]:
    """The storage requests `write` made (on a `counting` store) and what it returned."""
    before = sum(storage_calls.snapshot().values())
    result = write()
    return sum(storage_calls.snapshot().values()) - before, result
