"""The dispatcher's cursor and last-tick summary round-trip through real Table storage."""

from datetime import UTC, datetime, timedelta

from scheduler_lib.store.dispatcher_state import (
    DispatcherState,
    TickSummary,
    get_dispatcher_state,
    save_dispatcher_state,
)
from scheduler_lib.store.tables import TableStore

T0 = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)


def test_before_the_first_tick_there_is_no_cursor(store: TableStore) -> None:
    assert get_dispatcher_state(store) == DispatcherState()


def test_state_round_trips(store: TableStore) -> None:
    summary = TickSummary({"messages_sent": 3, "failed": 0}, 0.25, {"now": "2026-03-04T09:00:00Z"})
    state = DispatcherState(T0, T0 - timedelta(seconds=59), summary)
    save_dispatcher_state(store, state)
    assert get_dispatcher_state(store) == state


def test_last_write_wins_and_can_clear_the_cursor(store: TableStore) -> None:
    save_dispatcher_state(store, DispatcherState(T0, T0, TickSummary({"a": 1})))
    later = DispatcherState(None, T0 + timedelta(minutes=1), TickSummary({"b": 2}))
    save_dispatcher_state(store, later)
    assert get_dispatcher_state(store) == later


def test_a_stored_summary_reads_as_its_counts_duration_and_times(store: TableStore) -> None:
    """The stored JSON is the flat object it has always been (the health endpoint and rows
    written before read alike); a count, the duration, an instant each find their field."""
    stored = {"messages_sent": 2, "duration": 1, "now": "2026-03-04T09:00:00Z", "x": [1]}
    summary = TickSummary.from_json(stored)
    assert summary == TickSummary({"messages_sent": 2}, 1.0, {"now": "2026-03-04T09:00:00Z"})
    assert summary.to_json() == {"messages_sent": 2, "now": "2026-03-04T09:00:00Z", "duration": 1.0}
    assert TickSummary.from_json([]) == TickSummary()
