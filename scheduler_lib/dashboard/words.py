"""A schedule in plain words: "every weekday at 09:00 Europe/Berlin".

Read from the stored (canonical) `startTime` and `recurrence`, so it describes what the
engine will run, not what was typed: their canonical text (`JobDefinition.document`), whose
date-times are shown as the user wrote them, in the schedule's zone. The zone is shown by its
IANA name (a Windows name like "W. Europe Standard Time" is translated by the engine's own
zone lookup). The policies are read from the definition's typed fields.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass
from typing import Any

import isodate

from scheduler_lib.domain import ConcurrencyPolicy, JobDefinition, MissedRunPolicy
from scheduler_lib.domain import definition as fields
from scheduler_lib.domain.actions import DEFAULT_TIMEOUT, Action, RetryType
from scheduler_lib.errors import ValidationError
from scheduler_lib.schedule import MAX_JITTER, resolve_zone
from scheduler_lib.wire import attempt_timeout, deadman, pause
from scheduler_lib.wire.missed import MAX_RUNS


@dataclass(frozen=True)
class Fields:
    """The wire names the dashboard shows, keyed by the field they name (a `JobDefinition`
    property, an action's, a status's): each is the field's own declaration (`domain/definition.py`,
    `schedule.MAX_JITTER`, the catalog entry), so the pages' words and templates (`FIELD`)
    never spell a property's name themselves (docs/extensions.md)."""

    max_jitter: str = MAX_JITTER
    concurrency_policy: str = fields.CONCURRENCY_POLICY
    missed_run_policy: str = fields.MISSED_RUN_POLICY
    alert_if_no_success_within: str = fields.ALERT_IF_NO_SUCCESS_WITHIN
    notifications: str = fields.NOTIFICATIONS
    timeout: str = attempt_timeout.PROPERTY
    #: Read-only, under the job's `status` (`JobRecord.consecutive_failures`, its health).
    consecutive_failures: str = pause.STATUS.name
    health: str = deadman.STATUS.name


FIELD = Fields()

_UNITS = {
    "Minute": "minute",
    "Hour": "hour",
    "Day": "day",
    "Week": "week",
    "Month": "month",
    "Year": "year",
}
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
_ORDINALS = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth", -1: "last"}
_MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip


def _every(frequency: str, interval: int) -> str:
    unit = _UNITS.get(frequency, frequency.lower())
    return f"every {unit}" if interval == 1 else f"every {interval} {unit}s"


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _days(schedule: dict[str, Any]) -> str | None:
    days = schedule.get("weekDays")
    if days:
        if sorted(days, key=_weekday_index) == list(WEEKDAYS):
            return "weekday"
        if len(days) == 7:
            return "day"
        return _join(list(days))
    return None


def _weekday_index(day: str) -> int:
    order = (*WEEKDAYS, "Saturday", "Sunday")
    return order.index(day) if day in order else 7


def _times(schedule: dict[str, Any]) -> str | None:
    """The times of day; a field the schedule leaves out comes from the start (README)."""
    hours, minutes = schedule.get("hours"), schedule.get("minutes")
    if hours and minutes:
        times = [f"{h:02d}:{m:02d}" for h in hours for m in minutes]
        return "at " + _join(times[:6]) + (" …" if len(times) > 6 else "")
    if hours:
        return "at " + _join([f"{h:02d}:mm" for h in hours]) + " (mm: the start's minute)"
    if minutes:
        return "at minute " + _join([str(m) for m in minutes])
    return None


def describe(definition: JobDefinition) -> str:
    """The job's timing in words (a job without recurrence runs once)."""
    start, recurrence = definition.timing_key
    if not recurrence:
        return f"once, at {start}" if start else "once, when created"
    schedule = recurrence.get("schedule") or {}
    frequency = recurrence.get("frequency", "")
    parts = [_every(frequency, int(recurrence.get("interval", 1)))]
    days = _days(schedule)
    if days:
        parts = [f"every {days}"] if recurrence.get("interval", 1) == 1 else [*parts, f"on {days}"]
    if schedule.get("monthDays"):
        parts.append("on day " + _join([_day(d) for d in schedule["monthDays"]]))
    for occurrence in schedule.get("monthlyOccurrences") or []:
        which = _ORDINALS.get(occurrence.get("occurrence"), "every")
        parts.append(f"on the {which} {occurrence.get('day')}")
    if schedule.get("months"):
        parts.append("in " + _join([_MONTHS[m - 1] for m in schedule["months"]]))
    times = _times(schedule)
    if times:
        parts.append(times)
    parts.append(zone_name(recurrence.get("timeZone")))
    if recurrence.get("count"):
        count = int(recurrence["count"])
        parts.append("(once)" if count == 1 else f"({count} times)")
    if recurrence.get("endTime"):
        parts.append(f"until {recurrence['endTime']}")
    return " ".join(parts)


def _day(day: int) -> str:
    return "last" if day == -1 else str(day)


def zone_name(name: str | None) -> str:
    if not name:
        return "UTC"
    try:
        return resolve_zone(name).name
    except LookupError:
        return name


def policies(definition: JobDefinition) -> list[str]:
    """What the job's 2026-12-01 extensions change about when and how it runs, one sentence
    each (nothing for a job without them: the schedule's words say it all)."""
    said = []
    if definition.max_jitter:
        seconds = int(definition.max_jitter.total_seconds())
        said.append(f"Each run starts up to {seconds} s after its time ({FIELD.max_jitter}, "
                    "the same offset for the same occurrence).")  # fmt: skip
    policy = definition.concurrency_policy
    if policy == ConcurrencyPolicy.FORBID:
        said.append("A run due while the previous one still runs is skipped "
                    f"({FIELD.concurrency_policy} Forbid): history says Skipped, "
                    "not a failure.")  # fmt: skip
    elif policy == ConcurrencyPolicy.BUFFER_ONE:
        said.append("A run due while the previous one still runs waits for it "
                    f"({FIELD.concurrency_policy} BufferOne); at most one waits, "
                    "more are skipped.")  # fmt: skip
    missed = definition.missed_run_policy
    window = isodate.duration_isoformat(definition.catch_up_window)
    if missed == MissedRunPolicy.RUN_LATEST:
        said.append(f"After downtime, the latest missed run runs late, if missed at most "
                    f"{window} ago ({FIELD.missed_run_policy} RunLatest).")  # fmt: skip
    elif missed == MissedRunPolicy.RUN_ALL:
        said.append(f"After downtime, the runs missed in the last {window} run late, at most "
                    f"{MAX_RUNS} ({FIELD.missed_run_policy} RunAll).")  # fmt: skip
    action = _action(definition)
    if action is not None and action.timeout:
        pair = (action.timeout, DEFAULT_TIMEOUT)
        timeout, default = (isodate.duration_isoformat(d) for d in pair)
        said.append(f"Each attempt is cut off after {timeout} in all, the answer's body "
                    f"included ({FIELD.timeout}; {default} without it).")  # fmt: skip
    retry = action.retry_policy if action is not None else None
    if retry is not None and retry.retry_type is RetryType.EXPONENTIAL:
        first, cap = (isodate.duration_isoformat(d) for d in (retry.interval, retry.max_interval))
        said.append(f"A failed run retries up to {retry.count} times with "
                    f"exponential backoff from {first} up to {cap} "
                    "between tries (full jitter).")  # fmt: skip
    return said


def _action(definition: JobDefinition) -> Action | None:
    """The job's action, None if it is not readable (a page shows what it can)."""
    with suppress(ValidationError):
        return definition.action
    return None
