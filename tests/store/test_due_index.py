"""The due index answers minute ranges from real Table storage (Azurite)."""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from scheduler_lib.store.due_index import (
    DueRow,
    add_due,
    add_due_rows,
    due_rows,
    minute_key,
    park_message,
    remove_due,
    remove_due_rows,
)
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


def _pairs(rows: list[DueRow]) -> list[tuple[str, datetime]]:
    return sorted((r.job_key, r.due) for r in rows)


def test_batched_add_spans_partitions_and_transactions(store: TableStore) -> None:
    """150 rows in one minute (two transactions of at most 100) and 3 in the next."""
    wanted = [(f"s|r|c|job{i:03d}", T0) for i in range(150)]
    wanted += [(f"s|r|c|late{i}", T0 + timedelta(minutes=1)) for i in range(3)]
    add_due_rows(store, wanted)
    add_due_rows(store, wanted[:5])  # idempotent, like add_due
    rows = list(due_rows(store, start=T0, through=T0 + timedelta(minutes=1)))
    assert _pairs(rows) == sorted(wanted)


def test_batched_remove_keeps_a_row_written_again_since_it_was_read(store: TableStore) -> None:
    """The API may write a row again (a job rescheduled into the same minute) after the tick
    read it: that row stays. A row already gone does not stop the others."""
    add_due_rows(store, [(f"s|r|c|job{i}", T0) for i in range(5)])
    read = list(due_rows(store, start=T0, through=T0))
    add_due(store, "s|r|c|job1", T0 + timedelta(seconds=10))  # rewritten: new ETag
    remove_due(store, "s|r|c|job2", T0)  # already gone
    remove_due_rows(store, read)
    left = list(due_rows(store, start=T0, through=T0))
    assert _pairs(left) == [("s|r|c|job1", T0 + timedelta(seconds=10))]


def test_batched_remove_of_rows_never_read_is_unconditional(store: TableStore) -> None:
    add_due_rows(store, [("s|r|c|a", T0), ("s|r|c|b", T0)])
    remove_due_rows(store, [DueRow("s|r|c|a", T0, row_key="s|r|c|a")])
    assert _pairs(list(due_rows(store, start=T0, through=T0))) == [("s|r|c|b", T0)]
