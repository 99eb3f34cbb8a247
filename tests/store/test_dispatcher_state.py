"""The dispatcher's cursor and last-tick summary round-trip through real Table storage."""

from datetime import UTC, datetime, timedelta

from scheduler_lib.store.dispatcher_state import (
    DispatcherState,
    get_dispatcher_state,
    save_dispatcher_state,
)
from scheduler_lib.store.tables import TableStore

T0 = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)


def test_before_the_first_tick_there_is_no_cursor(store: TableStore) -> None:
    assert get_dispatcher_state(store) == DispatcherState()


def test_state_round_trips(store: TableStore) -> None:
    state = DispatcherState(T0, T0 - timedelta(seconds=59), {"messages_sent": 3, "failed": 0})
    save_dispatcher_state(store, state)
    assert get_dispatcher_state(store) == state


def test_last_write_wins_and_can_clear_the_cursor(store: TableStore) -> None:
    save_dispatcher_state(store, DispatcherState(T0, T0, {"a": 1}))
    save_dispatcher_state(store, DispatcherState(None, T0 + timedelta(minutes=1), {"b": 2}))
    assert get_dispatcher_state(store) == DispatcherState(None, T0 + timedelta(minutes=1), {"b": 2})
