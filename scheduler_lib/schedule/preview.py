"""Previews of a job's next executions: a list for the API, a table for people.

A preview answers "did I write the schedule I meant?" before a job goes live, so the table
shows every execution both in UTC and in the job's own time zone, with the weekday.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from itertools import islice
from typing import Any
from zoneinfo import ZoneInfo

from scheduler_lib.errors import ValidationError
from scheduler_lib.schedule.jitter import MAX_JITTER, jittered_start, max_jitter
from scheduler_lib.schedule.parse import parse_date_time
from scheduler_lib.schedule.recurrence import Schedule, parse_schedule
from scheduler_lib.schedule.timezones import UTC_ZONE

#: The keys of a job's properties (the 2016-03-01 JobProperties); a preview reads only the
#: timing, so the others are let through unread.
JOB_PROPERTIES = ("startTime", "action", "recurrence", "state", "status")


def job_properties(document: Any) -> Any:
    """What a preview reads from a job document: the `properties` of a whole job (as GET
    returns it, or as a PUT body), else the document itself (just the properties)."""
    if isinstance(document, Mapping) and isinstance(document.get("properties"), Mapping):
        return document["properties"]
    return document


def read_now(value: Any, field: str = "now") -> datetime:
    """The instant a preview is evaluated as of: ISO 8601, naive meaning UTC; one that lies
    outside years 1-9999 once in UTC (year 1 at +14:00) is a ValidationError naming `field`."""
    instant = parse_date_time(value, field, UTC_ZONE)
    if instant is None:
        raise ValidationError(field, "must be an ISO 8601 date-time string")
    return instant


def preview(job: Mapping[str, Any], *, now: datetime, count: int = 10) -> list[datetime]:
    """The job's next `count` executions (aware UTC) as of `now`; ValidationError on bad input."""
    return _next(parse_schedule(job, now=now), count)


def preview_with_reason(
    job: Mapping[str, Any], *, now: datetime, count: int = 10, identity: str | None = None
) -> tuple[list[datetime], str | None]:
    """The next `count` executions, and when there are fewer, why (see `end_reason`);
    `identity` (the job's key) as for `upcoming_schedule`."""
    schedule = upcoming_schedule(job, now=now, identity=identity)
    executions = _next(schedule, count)
    return executions, end_reason(schedule, executions) if len(executions) < count else None


def upcoming_schedule(
    job: Mapping[str, Any], *, now: datetime, identity: str | None = None
) -> Schedule:
    """The job's schedule as of `now`, whose executions are its upcoming runs.

    With jitter and the job's identity (so its offsets are known), an occurrence whose
    scheduled time has passed but whose jittered start has not is still upcoming: it is
    what GET's `nextExecutionTime` and the dashboard name inside the jitter window. The
    schedule is then read as of `now - jitter`, when that finds such an occurrence first
    (the jitter is less than the gap between runs, so only the first can be one). A one-off
    counts only its own startTime, and a job without startTime is anchored at its creation,
    which a preview does not know: both are read as of `now`, as without jitter."""
    schedule = parse_schedule(job, now=now)
    jitter = max_jitter(job)
    if identity is None or jitter <= timedelta(0) or job.get("startTime") is None:
        return schedule
    try:
        earlier = parse_schedule(job, now=now - jitter)
    except (OverflowError, ValidationError):  # `now` within the jitter of year 1
        return schedule
    first = earlier.first()
    if first is None or first >= now or not (earlier.recurs or first == earlier.reference):
        return schedule
    return earlier if jittered_start(identity, jitter, first) > now else schedule


def starts(
    job: Mapping[str, Any], executions: list[datetime], identity: str | None
) -> list[datetime]:
    """When each of a job's `executions` starts: later by its jitter offset, which
    depends on the job's identity (`identity`: its key; None: not known, not shifted)."""
    jitter = max_jitter(job)
    if identity is None or not jitter:
        return executions
    return [jittered_start(identity, jitter, execution) for execution in executions]


def preview_table(
    job: Mapping[str, Any], *, now: datetime, count: int = 10, identity: str | None = None
) -> str:
    """The next `count` executions as an aligned text table (UTC and the job's zone); with
    jitter, when each starts (`identity`: the job's key) in a last column."""
    schedule = upcoming_schedule(job, now=now, identity=identity)
    executions = _next(schedule, count)
    zone = ZoneInfo(schedule.time_zone)
    jittered = bool(max_jitter(job))
    started = starts(job, executions, identity)
    rows = [("#", "UTC", schedule.time_zone, "day", *(["starts (UTC)"] if jittered else []))]
    for number, (instant, start) in enumerate(zip(executions, started, strict=True), start=1):
        local = instant.astimezone(zone)
        rows.append((
            str(number),
            f"{instant:%Y-%m-%d %H:%M:%S}Z",
            f"{local:%Y-%m-%d %H:%M:%S %Z (UTC%z)}",
            f"{local:%a}",
            *([_start_cell(job, start, identity)] if jittered else []),
        ))  # fmt: skip
    widths = [max(len(cell) for cell in column) for column in zip(*rows, strict=True)]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    if len(executions) < count:
        lines.append(f"({end_reason(schedule, executions)})")
    return "\n".join(lines)


def _start_cell(job: Mapping[str, Any], start: datetime, identity: str | None) -> str:
    """The jittered start, or without the job's identity the range it lies in."""
    if identity is None:
        return f"up to {job.get(MAX_JITTER)} later (offsets need the job's id)"
    return f"{start:%Y-%m-%d %H:%M:%S}Z"


def _next(schedule: Schedule, count: int) -> list[datetime]:
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise ValidationError("count", f"must be a non-negative integer, not {count!r}")
    return list(islice(schedule.executions(), count))


def end_reason(schedule: Schedule, executions: list[datetime]) -> str:
    """Why the job has no execution after `executions` (the earlier end wins when both
    count and endTime are given): what the CLI prints and the API returns."""
    if schedule.count is not None and len(executions) == schedule.count:
        return f"no more: recurrence.count is {schedule.count}"
    if not schedule.recurs:
        return "no more: without a recurrence the job runs once"
    if schedule.end_time is not None:
        return f"no more: recurrence.endTime is {schedule.end_time:%Y-%m-%d %H:%M:%SZ}"
    return "no more executions"
