"""The dashboard's sign-in sessions as the dashboard uses them: opened at sign-in, checked on
every request that carries the cookie, closed at sign-out (so a copied cookie is refused
everywhere once its owner signed out). The cookie itself is the dashboard's
(`dashboard/session`); this is only whether its session is still open, in storage."""

from __future__ import annotations

from datetime import datetime

from scheduler_lib.service.context import ApiContext
from scheduler_lib.store import (
    close_dashboard_session,
    dashboard_session_is_open,
    open_dashboard_session,
)


def open_session(ctx: ApiContext, session_id: str, *, expires_at: datetime, now: datetime) -> None:
    """Record a new session (and drop a few that expired without a sign-out)."""
    open_dashboard_session(ctx.store, session_id, expires_at=expires_at, now=now)


def session_is_open(ctx: ApiContext, session_id: str, *, now: datetime) -> bool:
    """Whether the session was opened and neither closed nor expired at `now`."""
    return dashboard_session_is_open(ctx.store, session_id, now=now)


def close_session(ctx: ApiContext, session_id: str) -> None:
    """End the session (closing one that already ended is fine)."""
    close_dashboard_session(ctx.store, session_id)
