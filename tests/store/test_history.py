"""Job history in real Table storage: newest first, filters, paging, pruning."""

from datetime import UTC, datetime, timedelta

from scheduler_lib.store.history import (
    HistoryEntry,
    add_history,
    delete_history,
    list_history,
    prune_history,
)
from scheduler_lib.store.tables import TableStore

T0 = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)


def _entry(minutes: int, status: str = "Completed", key: str = "s|r|c|j") -> HistoryEntry:
    start = T0 + timedelta(minutes=minutes)
    return HistoryEntry(
        job_key=key,
        start_time=start,
        end_time=start + timedelta(seconds=1),
        expected_execution_time=start,
        action_name="MainAction",
        status=status,
        message="Http Action - Response from host 'x': 'OK'",
        repeat_count=minutes,
    )


def test_newest_first_with_wire_properties(store: TableStore) -> None:
    for m in range(3):
        add_history(store, _entry(m))
    entries, token = list_history(store, "s|r|c|j")
    assert token is None
    assert [e.repeat_count for e in entries] == [2, 1, 0]
    assert entries[0].to_properties()["startTime"] == "2026-03-04T09:02:00Z"
    assert entries[0].history_id


def test_filter_and_paging(store: TableStore) -> None:
    for m in range(25):
        add_history(store, _entry(m, "Failed" if m % 5 == 0 else "Completed"))
    failed, _ = list_history(store, "s|r|c|j", status="Failed")
    assert [e.repeat_count for e in failed] == [20, 15, 10, 5, 0]
    seen, token = [], None
    while True:
        page, token = list_history(store, "s|r|c|j", page_size=10, continuation=token)
        seen += [e.repeat_count for e in page]
        if token is None:
            break
    assert seen == list(range(24, -1, -1))


def test_prune_keeps_newest_and_drops_old(store: TableStore) -> None:
    for m in range(10):
        add_history(store, _entry(m))
    add_history(store, _entry(0, key="other"))
    assert prune_history(store, "s|r|c|j", keep=6, older_than=T0 + timedelta(minutes=5)) == 5
    entries, _ = list_history(store, "s|r|c|j")
    assert [e.repeat_count for e in entries] == [9, 8, 7, 6, 5]
    assert delete_history(store, "s|r|c|j") == 5
    assert list_history(store, "s|r|c|j")[0] == []
    assert len(list_history(store, "other")[0]) == 1
