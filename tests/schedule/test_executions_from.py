"""`Schedule.executions_from`: the same instants as chaining `next_after`, in one walk (the
dashboard's timeline walks thousands of runs per job; `next_after` seeks afresh each time)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import islice

import pytest

from scheduler_lib.schedule import parse_schedule

NOW = datetime(2026, 3, 4, 9, 0, 17, tzinfo=UTC)
JOBS = [
    {"startTime": "2026-01-01T00:00:00Z", "recurrence": {"frequency": "Minute", "interval": 15}},
    {"recurrence": {"frequency": "Hour", "schedule": {"minutes": [5, 35]}}},
    {"startTime": "2026-03-01T00:00:00", "recurrence": {"frequency": "Week", "schedule": {
        "weekDays": ["Monday", "Friday"], "hours": [9], "minutes": [0]},
        "timeZone": "Europe/Berlin", "endTime": "2026-06-01T00:00:00Z"}},
    {"startTime": "2026-05-01T00:00:00Z", "recurrence": {"frequency": "Day", "interval": 2}},
    {"startTime": "2026-05-01T10:00:00Z"},
    {},
]  # fmt: skip


def _chained(schedule, instant: datetime, count: int) -> list[datetime]:
    found: list[datetime] = []
    at = schedule.next_after(instant - timedelta(microseconds=1))
    while at is not None and len(found) < count:
        found.append(at)
        at = schedule.next_after(at)
    return found


@pytest.mark.parametrize("job", JOBS)
@pytest.mark.parametrize("offset", [timedelta(0), timedelta(minutes=7), timedelta(days=40)])
def test_executions_from_is_next_after_in_one_walk(job, offset) -> None:
    schedule = parse_schedule(job, now=NOW)
    instant = NOW + offset
    assert list(islice(schedule.executions_from(instant), 60)) == _chained(schedule, instant, 60)


def test_executions_still_stop_at_count() -> None:
    schedule = parse_schedule({"recurrence": {"frequency": "Minute", "count": 3}}, now=NOW)
    assert len(list(schedule.executions())) == 3
