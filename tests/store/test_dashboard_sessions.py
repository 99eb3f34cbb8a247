"""The dashboard's open sessions in Azurite: opened, ended, expired, and the expired rows a
sign-in clears away; the table never holds a session id as the cookie carries it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from scheduler_lib.store import (
    close_dashboard_session,
    dashboard_session_is_open,
    open_dashboard_session,
)
from scheduler_lib.store.dashboard_sessions import PARTITION, PURGE_BATCH, TABLE

NOW = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
HOURS_8 = timedelta(hours=8)


def _rows(store) -> list[dict]:
    query = store.table(TABLE).query_entities("PartitionKey eq @pk", parameters={"pk": PARTITION})
    return list(query)


def test_a_session_is_open_until_it_is_closed(store) -> None:
    open_dashboard_session(store, "sid-1", expires_at=NOW + HOURS_8, now=NOW)
    assert dashboard_session_is_open(store, "sid-1", now=NOW)
    assert not dashboard_session_is_open(store, "sid-2", now=NOW)
    close_dashboard_session(store, "sid-1")
    assert not dashboard_session_is_open(store, "sid-1", now=NOW)
    close_dashboard_session(store, "sid-1")  # twice is fine


def test_a_session_ends_when_it_expires(store) -> None:
    open_dashboard_session(store, "sid-1", expires_at=NOW + HOURS_8, now=NOW)
    assert dashboard_session_is_open(store, "sid-1", now=NOW + HOURS_8 - timedelta(seconds=1))
    assert not dashboard_session_is_open(store, "sid-1", now=NOW + HOURS_8)


def test_the_table_holds_no_session_id(store) -> None:
    open_dashboard_session(store, "visible-session-id", expires_at=NOW + HOURS_8, now=NOW)
    assert "visible-session-id" not in repr(_rows(store))


def test_a_sign_in_clears_expired_sessions_a_batch_at_a_time(store) -> None:
    for i in range(PURGE_BATCH + 5):
        open_dashboard_session(store, f"old-{i}", expires_at=NOW + HOURS_8, now=NOW)
    later = NOW + HOURS_8 + timedelta(minutes=1)
    open_dashboard_session(store, "new-1", expires_at=later + HOURS_8, now=later)
    assert len(_rows(store)) == 5 + 1
    open_dashboard_session(store, "new-2", expires_at=later + HOURS_8, now=later)
    assert len(_rows(store)) == 2
    assert dashboard_session_is_open(store, "new-1", now=later)
