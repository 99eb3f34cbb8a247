"""Previews of a job's next executions: a list for the API, a table for people.

A preview answers "did I write the schedule I meant?" before a job goes live, so the table
shows every execution both in UTC and in the job's own time zone, with the weekday.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from itertools import islice
from typing import Any
from zoneinfo import ZoneInfo

from scheduler_lib.errors import ValidationError
from scheduler_lib.recurrence import Schedule, parse_schedule


def preview(job: Mapping[str, Any], *, now: datetime, count: int = 10) -> list[datetime]:
    """The job's next `count` executions (aware UTC) as of `now`; ValidationError on bad input."""
    return _next(parse_schedule(job, now=now), count)


def preview_table(job: Mapping[str, Any], *, now: datetime, count: int = 10) -> str:
    """The next `count` executions as an aligned text table (UTC and the job's zone)."""
    schedule = parse_schedule(job, now=now)
    executions = _next(schedule, count)
    zone = ZoneInfo(schedule.time_zone)
    rows = [("#", "UTC", schedule.time_zone, "day")]
    for number, instant in enumerate(executions, start=1):
        local = instant.astimezone(zone)
        rows.append((
            str(number),
            f"{instant:%Y-%m-%d %H:%M:%S}Z",
            f"{local:%Y-%m-%d %H:%M:%S %Z (UTC%z)}",
            f"{local:%a}",
        ))  # fmt: skip
    widths = [max(len(cell) for cell in column) for column in zip(*rows, strict=True)]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    if len(executions) < count:
        lines.append(_why_fewer(schedule, executions))
    return "\n".join(lines)


def _next(schedule: Schedule, count: int) -> list[datetime]:
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise ValidationError("count", f"must be a non-negative integer, not {count!r}")
    return list(islice(schedule.executions(), count))


def _why_fewer(schedule: Schedule, executions: list[datetime]) -> str:
    """One line saying why the list is shorter than asked: the job ends within it."""
    if schedule.count is not None and len(executions) == schedule.count:
        return f"(no more: recurrence.count is {schedule.count})"
    if schedule.end_time is not None:
        return f"(no more: recurrence.endTime is {schedule.end_time:%Y-%m-%d %H:%M:%SZ})"
    return "(no more executions)"
