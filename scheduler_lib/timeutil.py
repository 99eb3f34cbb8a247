"""Time, one way: the clock type every component is handed, the one reading of the real
clock, and the one way a time is written for people and the wire.

Library code takes `now` or a `Clock`; only the entry points (`runtime.Runtime`, the CLI,
the local host) default it to `utc_now`, so tests drive time by handing in their own clock.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

#: A source of the current time (timezone-aware, UTC).
Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The real clock. Only entry points call it; the library is handed `now` or a `Clock`."""
    return datetime.now(UTC)


def iso_z(value: datetime) -> str:
    """`value` in UTC as ISO 8601 with a `Z` (`2026-03-04T09:00:00Z`), as the API and the
    logs show times; an aware time in another zone is converted, never relabelled."""
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
