"""The due index answers minute ranges from real Table storage (Azurite)."""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from scheduler_lib.store.due_index import add_due, due_rows, minute_key, park_message, remove_due
from scheduler_lib.store.tables import TableStore

T0 = datetime(2026, 3, 4, 9, 0, 30, tzinfo=UTC)


def test_minute_key_is_utc() -> None:
    local = T0.astimezone(ZoneInfo("America/New_York"))
    assert minute_key(local) == "202603040900"


def test_range_returns_only_the_minutes_asked_for(store: TableStore) -> None:
    for i in range(5):
        add_due(store, f"sub|rg|c|job{i}", T0 + timedelta(minutes=i))
    rows = list(due_rows(store, start=T0 + timedelta(minutes=1), through=T0 + timedelta(minutes=3)))
    assert [(r.job_key, r.due, r.row_key) for r in rows] == [
        (f"sub|rg|c|job{i}", T0 + timedelta(minutes=i), f"sub|rg|c|job{i}") for i in (1, 2, 3)
    ]


def test_add_is_idempotent_and_remove_tolerates_missing(store: TableStore) -> None:
    add_due(store, "k", T0)
    add_due(store, "k", T0)
    assert len(list(due_rows(store, start=T0, through=T0))) == 1
    remove_due(store, "k", T0)
    remove_due(store, "k", T0)
    assert list(due_rows(store, start=T0, through=T0)) == []


def test_parked_message_comes_back_with_its_payload(store: TableStore) -> None:
    add_due(store, "s|r|c|j", T0)
    parked = park_message(store, "s|r|c|j", "tag1", '{"v":1}', T0)
    rows = sorted(due_rows(store, start=T0, through=T0), key=lambda r: r.row_key)
    assert [(r.job_key, r.payload) for r in rows] == [("s|r|c|j", None), ("s|r|c|j", '{"v":1}')]
    remove_due(store, parked.row_key, T0)
    assert [r.payload for r in due_rows(store, start=T0, through=T0)] == [None]
