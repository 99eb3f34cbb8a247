"""Extension 3 (2026-12-01): missed runs on purpose. `missedRunPolicy` and `catchUpWindow`
(job properties) and the body of `POST .../backfill` are validated here, and `missed_runs` is
the one decision of which missed occurrences run late: the dispatcher takes it when it
postpones occurrences missed by downtime (`dispatch/postpone.py`), the executor when an
occurrence's message arrives later than the grace period (`execution/late.py`: it was queued
before an outage, so the dispatcher's postponement never saw it).

Inspired by Kubernetes CronJob's `startingDeadlineSeconds`, Quartz's misfire instructions
(fire once now / fire all), Temporal's catch-up window and Airflow's `catchup`/`backfill`.
"""

from __future__ import annotations

from collections import deque
from datetime import datetime, timedelta
from itertools import takewhile
from typing import Any

import isodate

from scheduler_lib.domain import JobRecord, MissedRunPolicy
from scheduler_lib.domain.definition import (
    CATCH_UP_WINDOW,
    DEFAULT_CATCH_UP_WINDOW,
    MISSED_RUN_POLICY,
)
from scheduler_lib.errors import ValidationError
from scheduler_lib.schedule import Schedule
from scheduler_lib.wire import readers
from scheduler_lib.wire.durations import read_iso_duration
from scheduler_lib.wire.shapes import JSONObject
from scheduler_lib.wire.versions import ExtensionProperty, Location

#: At most this many missed occurrences run late per postponement (RunAll: the latest ones),
#: and at most this many occurrences per backfill request.
MAX_RUNS = 50
MAX_WINDOW = timedelta(days=7)
#: How far back a backfill may reach (history is kept for 60 days; a target rarely longer).
MAX_BACKFILL_AGE = timedelta(days=60)


def missed_run_policy(value: Any, path: str) -> str:
    return readers.enum(value, path, [policy.value for policy in MissedRunPolicy])


def catch_up_window(value: Any, path: str) -> str:
    """`catchUpWindow`: 1 minute to 7 days."""
    text = readers.duration(value, path, low=timedelta(minutes=1))
    if read_iso_duration(text, path) > MAX_WINDOW:
        raise ValidationError(path, "must be at most P7D")
    return text


def check_window(definition: JSONObject, value: Any, path: str) -> None:
    """A window bounds late runs: with Skip nothing runs late, so it would be ignored."""
    if definition.get(MISSED_RUN_POLICY) in (None, MissedRunPolicy.SKIP):
        raise ValidationError(path, "applies to missedRunPolicy RunLatest or RunAll only")


def missed_runs(
    job: JobRecord, schedule: Schedule, first_missed: datetime, *, now: datetime
) -> list[datetime]:
    """The missed occurrences (from `first_missed` through `now`) the job's policy runs late:
    none (Skip), the latest (RunLatest), or those inside `catchUpWindow`, the latest
    `MAX_RUNS` (RunAll). Occurrences older than the window never run."""
    policy = job.definition.missed_run_policy
    if policy is MissedRunPolicy.SKIP:
        return []
    start = max(first_missed, now - job.definition.catch_up_window)
    missed = takewhile(lambda instant: instant <= now, schedule.executions_from(start))
    keep = 1 if policy is MissedRunPolicy.RUN_LATEST else MAX_RUNS
    return list(deque(missed, maxlen=keep))


def backfill_range(body: Any, *, now: datetime) -> tuple[datetime, datetime]:
    """`{"from": iso, "to": iso}` of a backfill: a past range, `from` <= `to` <= now, no
    older than `MAX_BACKFILL_AGE`; a ValidationError naming the field otherwise."""
    source = readers.keys(body, "", ("from", "to"))
    bounds = []
    for name in ("from", "to"):
        if source.get(name) is None:
            raise ValidationError(name, "is required (an ISO 8601 date-time)")
        bounds.append(readers.instant(source[name], name))  # naive is read as UTC
    start, end = bounds
    if end < start:
        raise ValidationError("to", "must not be before from")
    if end > now:
        raise ValidationError("to", "must not be in the future (backfill runs past occurrences)")
    if start < now - MAX_BACKFILL_AGE:
        raise ValidationError("from", "must be at most 60 days ago")
    return start, end


POLICY_SCHEMA: JSONObject = {
    "type": "string",
    "enum": [policy.value for policy in MissedRunPolicy],
    "description": "Occurrences missed by more than the grace period (downtime): Skip "
    "(default: one Postponed entry), RunLatest (also run the latest missed one once, late), "
    f"RunAll (run the missed ones inside catchUpWindow, at most {MAX_RUNS}, the latest).",
}
WINDOW_SCHEMA: JSONObject = {
    "type": "string",
    "format": "duration",
    "description": "RunLatest/RunAll: only occurrences missed at most this long ago run late "
    f"(default {isodate.duration_isoformat(DEFAULT_CATCH_UP_WINDOW)}, at most P7D).",
}

#: Their entries in the catalog (`extension_catalog`).
POLICY_ENTRY = ExtensionProperty(Location.JOB, MISSED_RUN_POLICY, missed_run_policy, POLICY_SCHEMA)
WINDOW_ENTRY = ExtensionProperty(
    Location.JOB, CATCH_UP_WINDOW, catch_up_window, WINDOW_SCHEMA, cross_check=check_window
)
