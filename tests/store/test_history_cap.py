"""The history cap enforced at write time, against real Table storage: a write that takes a
job past `keep + TRIM_SLACK` entries trims it to the newest `keep`, without a scan per write."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from scheduler_lib.store.history import (
    HISTORY_KEEP,
    TABLE,
    TRIM_SLACK,
    HistoryEntry,
    add_history,
    list_history,
)
from scheduler_lib.store.partition_counter import COUNTER_ROW
from scheduler_lib.store.tables import TableStore

T0 = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
KEY = "s|r|c|capped"


def _add(store: TableStore, minute: int, *, keep: int) -> None:
    start = T0 + timedelta(minutes=minute)
    entry = HistoryEntry(KEY, start, start, start, "MainAction", "Completed", f"#{minute}")
    add_history(store, entry, keep=keep)


def _all(store: TableStore) -> list[HistoryEntry]:
    entries, _ = list_history(store, KEY, page_size=1000)
    return entries


def _counted(store: TableStore) -> int:
    return int(store.table(TABLE).get_entity(KEY, COUNTER_ROW)["Count"])


def test_the_documented_cap_is_1000() -> None:
    assert HISTORY_KEEP == 1000


@pytest.mark.parametrize("keep", [3, 20])
def test_a_write_past_the_cap_plus_slack_keeps_the_newest(store: TableStore, keep: int) -> None:
    for minute in range(keep + TRIM_SLACK):
        _add(store, minute, keep=keep)
    assert len(_all(store)) == keep + TRIM_SLACK  # within the slack: no trim yet

    _add(store, keep + TRIM_SLACK, keep=keep)

    entries = _all(store)
    assert [e.message for e in entries] == [
        f"#{m}" for m in range(keep + TRIM_SLACK, TRIM_SLACK, -1)
    ]
    assert _counted(store) == keep
    for minute in range(keep + TRIM_SLACK + 1, keep + 2 * TRIM_SLACK + 2):
        _add(store, minute, keep=keep)
    assert len(_all(store)) == keep and _counted(store) == keep


def test_history_stored_before_the_count_is_counted_once(store: TableStore) -> None:
    for minute in range(TRIM_SLACK + 5):
        _add(store, minute, keep=HISTORY_KEEP)
    store.table(TABLE).delete_entity(KEY, COUNTER_ROW)  # as stored by an older version

    _add(store, TRIM_SLACK + 5, keep=5)

    assert len(_all(store)) == 5 and _counted(store) == 5


def test_the_count_never_shows_up_as_an_entry(store: TableStore) -> None:
    _add(store, 0, keep=HISTORY_KEEP)
    page, token = list_history(store, KEY, page_size=1)
    assert len(page) == 1 and page[0].message == "#0"
    assert token is None or list_history(store, KEY, page_size=1, continuation=token)[0] == []
