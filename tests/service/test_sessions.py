"""The dashboard's sessions as the use case the sign-in, the sign-out and every page ask
(`service/sessions.py`), on real Azurite tables: open until closed or expired, and closing
twice is fine."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from scheduler_lib.config import Settings
from scheduler_lib.service.context import ApiContext
from scheduler_lib.service.sessions import close_session, open_session, session_is_open
from scheduler_lib.store import TableStore
from scheduler_lib.store.execution_queue import ExecutionQueue

NOW = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)


def _context(settings: Settings, store: TableStore) -> ApiContext:
    return ApiContext(settings, lambda: NOW, store, ExecutionQueue(settings))


def test_a_session_is_open_until_closed(settings: Settings, store: TableStore) -> None:
    ctx = _context(settings, store)
    open_session(ctx, "s-1", expires_at=NOW + timedelta(hours=1), now=NOW)
    assert session_is_open(ctx, "s-1", now=NOW)
    assert not session_is_open(ctx, "s-2", now=NOW)  # never opened
    close_session(ctx, "s-1")
    close_session(ctx, "s-1")  # signing out twice is fine
    assert not session_is_open(ctx, "s-1", now=NOW)


def test_a_session_is_closed_once_it_expires(settings: Settings, store: TableStore) -> None:
    ctx = _context(settings, store)
    open_session(ctx, "s-3", expires_at=NOW + timedelta(hours=1), now=NOW)
    assert session_is_open(ctx, "s-3", now=NOW + timedelta(minutes=59))
    assert not session_is_open(ctx, "s-3", now=NOW + timedelta(hours=1))
