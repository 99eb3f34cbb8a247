"""Extension 3 (2026-12-01): missed runs on purpose, validated here. `missedRunPolicy` and
`catchUpWindow` (job properties; applied by the dispatcher when it postpones occurrences
missed by downtime, `dispatch/catch_up.py`) and the body of `POST .../backfill`.

Inspired by Kubernetes CronJob's `startingDeadlineSeconds`, Quartz's misfire instructions
(fire once now / fire all), Temporal's catch-up window and Airflow's `catchup`/`backfill`.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from scheduler_lib.errors import ValidationError
from scheduler_lib.model import wire
from scheduler_lib.model.durations import read_iso_duration


class MissedRunPolicy(StrEnum):
    SKIP = "Skip"  # one Postponed entry, continue at the next occurrence (the default)
    RUN_LATEST = "RunLatest"  # and run the latest missed occurrence once, late
    RUN_ALL = "RunAll"  # and run the missed occurrences inside catchUpWindow (at most MAX_RUNS)


#: At most this many missed occurrences run late per postponement (RunAll: the latest ones),
#: and at most this many occurrences per backfill request.
MAX_RUNS = 50
DEFAULT_WINDOW = timedelta(days=1)
MAX_WINDOW = timedelta(days=7)
#: How far back a backfill may reach (history is kept for 60 days; a target rarely longer).
MAX_BACKFILL_AGE = timedelta(days=60)


def missed_run_policy(value: Any, path: str) -> str:
    return wire.enum(value, path, [policy.value for policy in MissedRunPolicy])


def catch_up_window(value: Any, path: str) -> str:
    """`catchUpWindow`: 1 minute to 7 days."""
    text = wire.duration(value, path, low=timedelta(minutes=1))
    if read_iso_duration(text, path) > MAX_WINDOW:
        raise ValidationError(path, "must be at most P7D")
    return text


def check_window(definition: dict[str, Any], value: Any, path: str) -> None:
    """A window bounds late runs: with Skip nothing runs late, so it would be ignored."""
    if definition.get("missedRunPolicy") in (None, MissedRunPolicy.SKIP):
        raise ValidationError(path, "applies to missedRunPolicy RunLatest or RunAll only")


def window_of(definition: dict[str, Any]) -> timedelta:
    value = definition.get("catchUpWindow")
    return DEFAULT_WINDOW if value is None else read_iso_duration(value, "catchUpWindow")


def backfill_range(body: Any, *, now: datetime) -> tuple[datetime, datetime]:
    """`{"from": iso, "to": iso}` of a backfill: a past range, `from` <= `to` <= now, no
    older than `MAX_BACKFILL_AGE`; a ValidationError naming the field otherwise."""
    source = wire.keys(body, "", ("from", "to"))
    bounds = []
    for name in ("from", "to"):
        if source.get(name) is None:
            raise ValidationError(name, "is required (an ISO 8601 date-time)")
        bounds.append(wire.instant(source[name], name))  # naive is read as UTC
    start, end = bounds
    if end < start:
        raise ValidationError("to", "must not be before from")
    if end > now:
        raise ValidationError("to", "must not be in the future (backfill runs past occurrences)")
    if start < now - MAX_BACKFILL_AGE:
        raise ValidationError("from", "must be at most 60 days ago")
    return start, end


POLICY_SCHEMA = {
    "type": "string",
    "enum": [policy.value for policy in MissedRunPolicy],
    "description": "Occurrences missed by more than the grace period (downtime): Skip "
    "(default: one Postponed entry), RunLatest (also run the latest missed one once, late), "
    f"RunAll (run the missed ones inside catchUpWindow, at most {MAX_RUNS}, the latest).",
}
WINDOW_SCHEMA = {
    "type": "string",
    "format": "duration",
    "description": "RunLatest/RunAll: only occurrences missed at most this long ago run late "
    "(default P1D, at most P7D).",
}
