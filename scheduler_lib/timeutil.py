"""Time, one way: the clock type every component is handed, the one reading of the real
clock, the one way a time is written for people and the wire, and the one ISO 8601
duration reader (`read_iso_duration`; why it reads liberally: `wire/durations.py`).

Library code takes `now` or a `Clock`; only the entry points (`runtime.Runtime`, the CLI,
the local host) default it to `utc_now`, so tests drive time by handing in their own clock.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import isodate

from scheduler_lib.errors import ValidationError

#: A source of the current time (timezone-aware, UTC).
Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The real clock. Only entry points call it; the library is handed `now` or a `Clock`."""
    return datetime.now(UTC)


def iso_z(value: datetime) -> str:
    """`value` in UTC as ISO 8601 with a `Z` (`2026-03-04T09:00:00Z`), as the API and the
    logs show times; an aware time in another zone is converted, never relabelled."""
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


# A day count in the time part: "PT1D", "PT1D12H" (the date part has no day count of its own).
_DAYS_IN_TIME = re.compile(
    r"^(?P<sign>[-+]?)P(?P<date>[^TD]*)T(?P<days>\d+(?:[.,]\d+)?D)(?P<time>.*)$"
)


def read_iso_duration(value: str, field: str) -> timedelta | isodate.Duration:
    """An ISO 8601 duration, read liberally (see `wire/durations.py`); years and months
    give an `isodate.Duration`, everything else a `timedelta`."""
    text = value.strip().upper()
    if match := _DAYS_IN_TIME.match(text):
        time = match["time"]
        text = f"{match['sign']}P{match['date']}{match['days']}" + (f"T{time}" if time else "")
    try:
        parsed = isodate.parse_duration(text)
    except OverflowError:
        raise ValidationError(field, "is too long a duration") from None
    except (isodate.ISO8601Error, ValueError):
        raise ValidationError(field, "must be an ISO 8601 duration, e.g. PT30S") from None
    if _negative(parsed):
        raise ValidationError(field, "must not be negative (a duration is a length of time)")
    return parsed


def _negative(duration: timedelta | isodate.Duration) -> bool:
    """`-PT1S`, `-P1M`: ISO 8601 allows the sign, no field of a job means anything by it."""
    if isinstance(duration, timedelta):
        return duration < timedelta(0)
    return duration.years < 0 or duration.months < 0 or duration.tdelta < timedelta(0)
