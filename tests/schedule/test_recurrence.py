"""The recurrence engine against the seed's examples and the semantics' rules, by example.

Every expected time below was worked out by hand from a calendar, not produced by the code.
The startTime of the seed table rows is Wednesday 2026-01-07 12:25Z unless a row says
otherwise, and the job is created at that same instant, so the first execution is the first
scheduled time at or after it. January 2026 starts on a Thursday.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta, timezone
from itertools import islice
from typing import Any

import pytest

from scheduler_lib.errors import ValidationError
from scheduler_lib.schedule.recurrence import occurrences, parse_schedule

START = "2026-01-07T12:25:00Z"
MWF = ["monday", "wednesday", "friday"]
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday"]


def utc(text: str) -> datetime:
    """'2026-01-07 12:25' (or with seconds) as an aware UTC datetime."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def first(job: dict[str, Any], now: datetime, n: int) -> list[datetime]:
    return list(islice(occurrences(job, now=now), n))


def example(
    frequency: str, schedule: dict[str, Any], expected: list[str], id: str, start: str = START
) -> Any:
    """One row: the schedule, its first executions ("MM-DD hh:mm" of 2026, UTC), a readable id."""
    return pytest.param(frequency, schedule, expected, start, id=id)


SEED_EXAMPLES = [
    example("Day", {"hours": [5]},
                 ["01-08 05:25", "01-09 05:25", "01-10 05:25"],
                 id="hours 5: 5AM (at R's minute) every day"),
    example("Day", {"minutes": [15], "hours": [5]},
                 ["01-08 05:15", "01-09 05:15", "01-10 05:15"], id="5:15AM every day"),
    example("Day", {"minutes": [15], "hours": [5, 17]},
                 ["01-07 17:15", "01-08 05:15", "01-08 17:15", "01-09 05:15"],
                 id="5:15AM and 5:15PM every day"),
    example("Day", {"minutes": [15, 45], "hours": [5, 17]},
                 ["01-07 17:15", "01-07 17:45", "01-08 05:15", "01-08 05:45", "01-08 17:15"],
                 id="5:15, 5:45, 17:15, 17:45 every day"),
    example("Day", {"minutes": [0, 15, 30, 45]},
                 ["01-07 12:30", "01-07 12:45", "01-07 13:00", "01-07 13:15"],
                 id="every 15 minutes"),
    example("Day", {"hours": list(range(24))},
                 ["01-07 12:25", "01-07 13:25", "01-07 14:25", "01-07 15:25"],
                 id="every hour at the start time's minute"),
    example("Day", {"minutes": [0]},
                 ["01-07 13:00", "01-07 14:00", "01-07 15:00"], id="every hour on the hour"),
    example("Week", {"minutes": [0]},
                 ["01-07 22:00", "01-07 23:00", "01-14 00:00", "01-14 01:00"],
                 id="on the hour, weekly: one day a week", start="2026-01-07T21:30:00Z"),
    example("Day", {"minutes": [15]},
                 ["01-07 13:15", "01-07 14:15", "01-07 15:15"], id="15 past every hour"),
    example("Week", {"hours": [17], "weekDays": ["saturday"]},
                 ["01-10 17:25", "01-17 17:25", "01-24 17:25"], id="5PM on Saturdays"),
    example("Week", {"hours": [17], "weekDays": MWF},
                 ["01-07 17:25", "01-09 17:25", "01-12 17:25", "01-14 17:25"],
                 id="5PM on Monday, Wednesday, Friday"),
    example("Week", {"minutes": [15, 45], "hours": [17], "weekDays": MWF},
                 ["01-07 17:15", "01-07 17:45", "01-09 17:15", "01-09 17:45", "01-12 17:15"],
                 id="5:15PM and 5:45PM on Mon, Wed, Fri"),
    example("Week", {"hours": [5, 17], "weekDays": MWF},
                 ["01-07 17:25", "01-09 05:25", "01-09 17:25", "01-12 05:25"],
                 id="5AM and 5PM on Mon, Wed, Fri"),
    example("Week", {"minutes": [15, 45], "hours": [5, 17], "weekDays": MWF},
                 ["01-07 17:15", "01-07 17:45", "01-09 05:15", "01-09 05:45", "01-09 17:15"],
                 id="5:15, 5:45, 17:15, 17:45 on Mon, Wed, Fri"),
    example("Week", {"minutes": [0, 15, 30, 45], "weekDays": WEEKDAYS},
                 ["01-09 23:30", "01-09 23:45", "01-12 00:00", "01-12 00:15"],
                 id="every 15 minutes on weekdays", start="2026-01-09T23:30:00Z"),
    example("Week", {"minutes": [0, 15, 30, 45], "hours": list(range(9, 17)),
                          "weekDays": WEEKDAYS},
                 ["01-09 16:30", "01-09 16:45", "01-12 09:00", "01-12 09:15"],
                 id="every 15 minutes on weekdays 9AM-4:45PM", start="2026-01-09T16:20:00Z"),
    example("Week", {"weekDays": ["sunday"]},
                 ["01-11 12:25", "01-18 12:25", "01-25 12:25"], id="Sundays at start time"),
    example("Week", {"weekDays": ["tuesday", "thursday"]},
                 ["01-08 12:25", "01-13 12:25", "01-15 12:25"],
                 id="Tuesdays and Thursdays at start time"),
    example("Month", {"minutes": [0], "hours": [6], "monthDays": [28]},
                 ["01-28 06:00", "02-28 06:00", "03-28 06:00"], id="6AM on the 28th"),
    example("Month", {"minutes": [0], "hours": [6], "monthDays": [-1]},
                 ["01-31 06:00", "02-28 06:00", "03-31 06:00", "04-30 06:00"],
                 id="6AM on the last day"),
    example("Month", {"minutes": [0], "hours": [6], "monthDays": [1, -1]},
                 ["01-31 06:00", "02-01 06:00", "02-28 06:00", "03-01 06:00"],
                 id="6AM on the first and last day"),
    example("Month", {"monthDays": [1, -1]},
                 ["01-31 12:25", "02-01 12:25", "02-28 12:25", "03-01 12:25"],
                 id="first and last day at start time"),
    example("Month", {"monthDays": [1, 14]},
                 ["01-14 12:25", "02-01 12:25", "02-14 12:25", "03-01 12:25"],
                 id="first and fourteenth day at start time"),
    example("Month", {"monthDays": [2]},
                 ["02-02 12:25", "03-02 12:25", "04-02 12:25"], id="second day at start time"),
    example("Month", {"minutes": [0], "hours": [5],
                           "monthlyOccurrences": [{"day": "friday", "occurrence": 1}]},
                 ["02-06 05:00", "03-06 05:00", "04-03 05:00"], id="first Friday at 5AM"),
    example("Month", {"monthlyOccurrences": [{"day": "friday", "occurrence": 1}]},
                 ["02-06 12:25", "03-06 12:25", "04-03 12:25"], id="first Friday at start time"),
    example("Month", {"monthlyOccurrences": [{"day": "friday", "occurrence": -3}]},
                 ["01-16 12:25", "02-13 12:25", "03-13 12:25", "04-10 12:25"],
                 id="third Friday from the end"),
    example("Month", {"minutes": [15], "hours": [5], "monthlyOccurrences": [
                     {"day": "friday", "occurrence": 1}, {"day": "friday", "occurrence": -1}]},
                 ["01-30 05:15", "02-06 05:15", "02-27 05:15", "03-06 05:15"],
                 id="first and last Friday at 5:15AM"),
    example("Month", {"monthlyOccurrences": [
                     {"day": "friday", "occurrence": 1}, {"day": "friday", "occurrence": -1}]},
                 ["01-30 12:25", "02-06 12:25", "02-27 12:25", "03-06 12:25"],
                 id="first and last Friday at start time"),
    example("Month", {"monthlyOccurrences": [{"day": "friday", "occurrence": 5}]},
                 ["01-30 12:25", "05-29 12:25", "07-31 12:25"],
                 id="fifth Friday: only months that have one"),
    example("Month", {"minutes": [0, 15, 30, 45],
                           "monthlyOccurrences": [{"day": "friday", "occurrence": -1}]},
                 ["01-30 23:45", "02-27 00:00", "02-27 00:15"],
                 id="every 15 minutes on the last Friday", start="2026-01-30T23:40:00Z"),
    example("Month", {"minutes": [15, 45], "hours": [5, 17],
                           "monthlyOccurrences": [{"day": "wednesday", "occurrence": 3}]},
                 ["01-21 05:15", "01-21 05:45", "01-21 17:15", "01-21 17:45", "02-18 05:15"],
                 id="5:15, 5:45, 17:15, 17:45 on the third Wednesday"),
]  # fmt: skip


@pytest.mark.parametrize(("frequency", "schedule", "expected", "start"), SEED_EXAMPLES)
def test_seed_recurrence_examples(
    frequency: str, schedule: dict[str, Any], expected: list[str], start: str
) -> None:
    job = {"startTime": start, "recurrence": {"frequency": frequency, "schedule": schedule}}
    got = first(job, utc(start[:-1]), len(expected))
    assert got == [utc(f"2026-{text}") for text in expected]


# ------------------------------------------------- the startTime table and its worked example


@pytest.mark.parametrize(
    "start", ["2015-04-07T14:00:00Z", "2015-04-05T14:00:00Z", "2015-04-01T14:00:00Z"]
)
def test_seed_start_time_worked_example(start: str) -> None:
    """now 2015-04-08 13:00, every 2 days: past instances are discarded, not run late."""
    job = {"startTime": start, "recurrence": {"frequency": "Day", "interval": 2}}
    got = first(job, utc("2015-04-08 13:00"), 4)
    assert got == [utc(f"2015-04-{day} 14:00") for day in ("09", "11", "13", "15")]


NOW = utc("2026-03-04 10:00")  # a Wednesday
PAST, FUTURE = "2026-03-02T08:00:00Z", "2026-03-06T08:00:00Z"
HOURLY = {"frequency": "Hour", "interval": 2}
WEEKLY = {"frequency": "Week", "schedule": {"weekDays": ["Tuesday", "Saturday"]}}


@pytest.mark.parametrize(("start", "recurrence", "expected"), [
    pytest.param(None, None, ["03-04 10:00"], id="no start, no recurrence: once, now"),
    pytest.param(PAST, None, ["03-04 10:00"], id="past start, no recurrence: once, now"),
    pytest.param(FUTURE, None, ["03-06 08:00"], id="future start, no recurrence: at startTime"),
    pytest.param(None, HOURLY, ["03-04 10:00", "03-04 12:00", "03-04 14:00"],
                 id="no start, no schedule: now, then every interval from now"),
    pytest.param(PAST, HOURLY, ["03-04 10:00", "03-04 12:00", "03-04 14:00"],
                 id="past start, no schedule: first startTime + k*interval at or after now"),
    pytest.param("2026-03-02T09:00:00Z", HOURLY, ["03-04 11:00", "03-04 13:00"],
                 id="past start, no schedule: k*interval lands after now"),
    pytest.param(FUTURE, HOURLY, ["03-06 08:00", "03-06 10:00"],
                 id="future start, no schedule: at startTime, then every interval"),
    pytest.param(None, WEEKLY, ["03-04 10:00", "03-07 10:00", "03-10 10:00"],
                 id="no start, schedule: now, then the schedule's times after now"),
    pytest.param(PAST, WEEKLY, ["03-07 08:00", "03-10 08:00"],
                 id="past start, schedule: first scheduled time at or after now"),
    pytest.param(FUTURE, WEEKLY, ["03-07 08:00", "03-10 08:00"],
                 id="future start, schedule: startTime runs only if selected"),
    pytest.param("2026-03-07T08:00:00Z", WEEKLY, ["03-07 08:00", "03-10 08:00"],
                 id="future start on a selected day: runs at startTime"),
])  # fmt: skip
def test_start_time_table(
    start: str | None, recurrence: dict[str, Any] | None, expected: list[str]
) -> None:
    job = {"startTime": start, "recurrence": recurrence}
    assert first(job, NOW, 10)[: len(expected)] == [utc(f"2026-{t}") for t in expected]
    if recurrence is None:
        assert len(first(job, NOW, 10)) == 1


def test_semantics_interval_example_counts_iso_weeks_from_the_start_week() -> None:
    """Week, interval 2, Tuesdays and Thursdays at 08:00, startTime Wednesday 03-04 09:00."""
    schedule = {"weekDays": ["Tuesday", "Thursday"], "hours": [8], "minutes": [0]}
    recurrence = {"frequency": "Week", "interval": 2, "schedule": schedule}
    job = {"startTime": "2026-03-04T09:00:00Z", "recurrence": recurrence}
    got = first(job, utc("2026-03-01 00:00"), 4)
    assert got == [utc(f"2026-{t} 08:00") for t in ("03-05", "03-17", "03-19", "03-31")]


@pytest.mark.parametrize("frequency", ["Minute", "Hour", "Day", "Week", "Month", "Year"])
def test_executions_fall_on_whole_seconds_rounded_up(frequency: str) -> None:
    """A job created at 10:00:07.25 runs first at 10:00:08 (never before it exists) and
    keeps that second; a startTime with a fraction is rounded up the same way."""
    created = datetime(2026, 3, 4, 10, 0, 7, 250_000, tzinfo=UTC)
    second = created.replace(microsecond=0) + timedelta(seconds=1)
    got = first({"recurrence": {"frequency": frequency, "interval": 5}}, created, 3)
    assert got[0] == second and all(t.microsecond == 0 for t in got)
    assert got[1].second == second.second
    job = {"startTime": "2026-03-05T10:00:07.25Z", "recurrence": {"frequency": frequency}}
    got = first(job, created, 3)
    assert got[0] == second + timedelta(days=1) and all(t.microsecond == 0 for t in got)
    once = parse_schedule({}, now=created).first()
    assert once == second


# ------------------------------------------------------------------- count and endTime


def test_count_daily_from_monday_completes_after_friday() -> None:
    """The seed's count example: daily, count 5, start Monday 2026-03-02."""
    job = {"startTime": "2026-03-02T07:00:00Z", "recurrence": {"frequency": "Day", "count": 5}}
    got = list(occurrences(job, now=utc("2026-03-01 00:00")))
    assert got == [utc(f"2026-03-0{day} 07:00") for day in range(2, 7)]


def test_count_with_a_past_start_counts_from_the_first_execution_after_creation() -> None:
    job = {"startTime": "2026-02-01T07:00:00Z", "recurrence": {"frequency": "Day", "count": 3}}
    got = list(occurrences(job, now=utc("2026-03-04 10:00")))
    assert got == [utc("2026-03-05 07:00"), utc("2026-03-06 07:00"), utc("2026-03-07 07:00")]


def test_count_includes_the_immediate_run() -> None:
    job = {"recurrence": {"frequency": "Day", "count": 2, "schedule": {"hours": [5]}}}
    assert list(occurrences(job, now=utc("2026-03-04 10:00"))) == [
        utc("2026-03-04 10:00"), utc("2026-03-05 05:00")]  # fmt: skip


@pytest.mark.parametrize(("end", "expected"), [
    pytest.param("2026-03-06T07:00:00Z", 4, id="an execution exactly at endTime runs"),
    pytest.param("2026-03-06T06:59:59Z", 3, id="nothing later than endTime"),
    pytest.param("2026-03-06", 3, id="a date alone is 00:00 UTC"),
    pytest.param("2026-03-06T03:00:00-05:00", 4, id="an offset locates the instant"),
])  # fmt: skip
def test_end_time(end: str, expected: int) -> None:
    job = {"startTime": "2026-03-03T07:00:00Z", "recurrence": {"frequency": "Day", "endTime": end}}
    got = list(occurrences(job, now=utc("2026-03-01 00:00")))
    assert got == [utc("2026-03-03 07:00") + timedelta(days=n) for n in range(expected)]


@pytest.mark.parametrize(("count", "end", "expected"), [
    pytest.param(2, "2026-03-10T00:00:00Z", 2, id="count ends first"),
    pytest.param(9, "2026-03-05T00:00:00Z", 2, id="endTime ends first"),
])  # fmt: skip
def test_count_and_end_time_whichever_ends_first(count: int, end: str, expected: int) -> None:
    job = {"startTime": "2026-03-03T07:00:00Z",
           "recurrence": {"frequency": "Day", "count": count, "endTime": end}}  # fmt: skip
    assert len(list(occurrences(job, now=utc("2026-03-01 00:00")))) == expected


def test_end_time_before_start_time_is_accepted_and_leaves_nothing() -> None:
    job = {"startTime": "2026-04-01T07:00:00Z",
           "recurrence": {"frequency": "Day", "endTime": "2026-03-20T00:00:00Z"}}  # fmt: skip
    assert list(occurrences(job, now=NOW)) == []


def test_end_time_in_the_past_is_accepted_and_leaves_nothing() -> None:
    job = {"startTime": "2026-01-01T07:00:00Z",
           "recurrence": {"frequency": "Day", "endTime": "2026-02-01T00:00:00Z"}}  # fmt: skip
    schedule = parse_schedule(job, now=NOW)
    assert schedule.first() is None
    assert schedule.next_after(utc("2026-01-05 00:00")) is None
    assert list(occurrences(job, now=NOW)) == []
    no_start = {"recurrence": {"frequency": "Day", "endTime": "2026-02-01T00:00:00Z"}}
    assert list(occurrences(no_start, now=NOW)) == []


def test_next_after_honours_end_time_but_not_count() -> None:
    recurrence = {"frequency": "Day", "count": 2, "endTime": "2026-03-05T07:00:00Z"}
    job = {"startTime": "2026-03-03T07:00:00Z", "recurrence": recurrence}
    schedule = parse_schedule(job, now=utc("2026-03-01 00:00"))
    assert schedule.next_after(utc("2026-03-04 07:00")) == utc("2026-03-05 07:00")  # past count
    assert schedule.next_after(utc("2026-03-05 07:00")) is None  # past endTime


# ------------------------------------------------------------- month ends and leap years


@pytest.mark.parametrize(("start", "schedule", "expected"), [
    pytest.param("2026-01-31T09:00:00Z", None,
                 ["2026-01-31", "2026-03-31", "2026-05-31", "2026-07-31"],
                 id="no schedule, start on the 31st: months without one are skipped"),
    pytest.param("2026-01-01T09:00:00Z", {"monthDays": [31]},
                 ["2026-01-31", "2026-03-31", "2026-05-31"], id="monthDays 31"),
    pytest.param("2026-01-01T09:00:00Z", {"monthDays": [30]},
                 ["2026-01-30", "2026-03-30", "2026-04-30"], id="monthDays 30 skips February"),
    pytest.param("2026-01-01T09:00:00Z", {"monthDays": [-31]},
                 ["2026-01-01", "2026-03-01", "2026-05-01"],
                 id="monthDays -31: the 1st of 31-day months only"),
    pytest.param("2028-01-15T09:00:00Z", {"monthDays": [-1]},
                 ["2028-01-31", "2028-02-29", "2028-03-31"], id="last day in a leap February"),
    pytest.param("2028-01-15T09:00:00Z", {"monthDays": [29, -1]},
                 ["2028-01-29", "2028-01-31", "2028-02-29", "2028-03-29"],
                 id="29 and -1 on the same day run once"),
    pytest.param("2026-01-01T09:00:00Z",
                 {"monthDays": [13], "monthlyOccurrences": [{"day": "Friday", "occurrence": 2}]},
                 ["2026-01-09", "2026-01-13", "2026-02-13", "2026-03-13"],
                 id="monthDays and monthlyOccurrences: their union, once each"),
    pytest.param("2026-01-01T09:00:00Z", {"monthlyOccurrences": [{"day": "Sunday"}]},
                 ["2026-01-04", "2026-01-11", "2026-01-18", "2026-01-25", "2026-02-01"],
                 id="an occurrence without a number: every such day"),
])  # fmt: skip
def test_month_ends(start: str, schedule: dict[str, Any] | None, expected: list[str]) -> None:
    job = {"startTime": start, "recurrence": {"frequency": "Month", "schedule": schedule}}
    got = first(job, utc("2026-01-01 00:00"), len(expected))
    assert got == [utc(f"{day} 09:00") for day in expected]


@pytest.mark.parametrize(("recurrence", "expected"), [
    pytest.param({"frequency": "Year"}, ["2024-02-29", "2028-02-29", "2032-02-29"],
                 id="yearly from Feb 29: leap years only"),
    pytest.param({"frequency": "Year", "schedule": {"monthDays": [-1]}},
                 ["2024-02-29", "2025-02-28", "2026-02-28", "2027-02-28", "2028-02-29"],
                 id="yearly on February's last day"),
    pytest.param({"frequency": "Year", "interval": 2, "schedule": {"months": [2, 8],
                                                                   "monthDays": [29]}},
                 ["2024-02-29", "2024-08-29", "2026-08-29", "2028-02-29"],
                 id="every 2 years, Feb and Aug 29"),
    pytest.param({"frequency": "Year", "schedule": {
                     "months": [11], "monthlyOccurrences": [{"day": "Thursday", "occurrence": 4}]}},
                 ["2024-11-28", "2025-11-27", "2026-11-26"], id="fourth Thursday of November"),
    pytest.param({"frequency": "Month", "interval": 12}, ["2024-02-29", "2028-02-29"],
                 id="every 12 months from Feb 29"),
])  # fmt: skip
def test_leap_years(recurrence: dict[str, Any], expected: list[str]) -> None:
    job = {"startTime": "2024-02-29T09:00:00Z", "recurrence": recurrence}
    got = first(job, utc("2024-01-01 00:00"), len(expected))
    assert got == [utc(f"{day} 09:00") for day in expected]


def test_a_schedule_that_never_runs_has_no_executions() -> None:
    """Every 4 years from 2025 never meets a leap year: no execution, rather than a hang."""
    schedule = {"months": [2], "monthDays": [29]}
    recurrence = {"frequency": "Year", "interval": 4, "schedule": schedule}
    job = {"startTime": "2025-02-01T09:00:00Z", "recurrence": recurrence}
    schedule = parse_schedule(job, now=utc("2025-01-01 00:00"))
    assert schedule.first() is None
    assert list(occurrences(job, now=utc("2025-01-01 00:00"))) == []


# ------------------------------------------------------------------------ next_after


DAILY_AT_7 = {"startTime": "2026-03-03T07:00:00Z", "recurrence": {"frequency": "Day"}}


@pytest.mark.parametrize(("instant", "expected"), [
    pytest.param("2020-01-01 00:00", "2026-03-05 07:00", id="before R: the first execution"),
    pytest.param("2026-03-05 07:00", "2026-03-06 07:00", id="at an execution: the next one"),
    pytest.param("2026-03-05 06:59:59", "2026-03-05 07:00", id="just before one: that one"),
    pytest.param("2526-03-05 07:00", "2526-03-06 07:00", id="five centuries later"),
    pytest.param("9999-12-31 07:00", None, id="the end of the calendar: nothing"),
])  # fmt: skip
def test_next_after(instant: str, expected: str | None) -> None:
    schedule = parse_schedule(DAILY_AT_7, now=utc("2026-03-04 10:00"))
    assert schedule.next_after(utc(instant)) == (expected and utc(expected))


@pytest.mark.parametrize("zone", [None, "Pacific/Kiritimati", "Etc/GMT+12"])
@pytest.mark.parametrize("frequency", ["Minute", "Hour", "Day", "Week", "Month", "Year"])
def test_the_end_of_the_calendar_ends_every_schedule(frequency: str, zone: str | None) -> None:
    """Year 9999 is the end: next_after answers None there rather than failing (a UTC+14
    zone reads past it first)."""
    recurrence = {"frequency": frequency, "timeZone": zone}
    schedule = parse_schedule({"startTime": "2026-03-04T10:00:00", "recurrence": recurrence},
                              now=NOW)  # fmt: skip
    last = datetime.max.replace(tzinfo=UTC)
    assert schedule.next_after(last) is None
    for instant in (last - timedelta(days=40), last - timedelta(minutes=30)):
        answer = schedule.next_after(instant)
        assert answer is None or instant < answer <= last


def test_next_after_without_recurrence() -> None:
    schedule = parse_schedule({"startTime": "2026-03-06T08:00:00Z"}, now=NOW)
    assert schedule.next_after(NOW) == utc("2026-03-06 08:00")
    assert schedule.next_after(utc("2026-03-06 08:00")) is None


def test_instants_in_other_offsets_are_the_same_instants() -> None:
    schedule = parse_schedule(DAILY_AT_7, now=utc("2026-03-04 10:00"))
    tokyo = datetime(2026, 3, 5, 16, 0, tzinfo=timezone(timedelta(hours=9)))  # 07:00Z
    assert schedule.next_after(tokyo) == utc("2026-03-06 07:00")
    assert first(DAILY_AT_7, tokyo, 1) == [utc("2026-03-05 07:00")]


@pytest.mark.parametrize("name", ["now", "instant"])
def test_naive_datetimes_are_refused(name: str) -> None:
    naive = datetime(2026, 3, 4, 10, 0)
    with pytest.raises(ValueError, match=name):
        if name == "now":
            parse_schedule(DAILY_AT_7, now=naive)
        else:
            parse_schedule(DAILY_AT_7, now=NOW).next_after(naive)


# ------------------------------------------------------------------- the Schedule object


def test_schedule_describes_the_job() -> None:
    recurrence = {"frequency": "Day", "count": 3, "endTime": "2026-04-01",
                  "timeZone": "W. Europe Standard Time"}  # fmt: skip
    job = {"startTime": "2026-03-03T07:00:00", "recurrence": recurrence}
    schedule = parse_schedule(job, now=NOW)
    assert schedule.reference == utc("2026-03-03 06:00")
    assert schedule.reference.tzinfo is UTC
    assert (schedule.count, schedule.end_time) == (3, utc("2026-03-31 22:00"))
    assert schedule.time_zone == "Europe/Berlin"
    assert parse_schedule({}, now=NOW).time_zone == "UTC"
    with pytest.raises(dataclasses.FrozenInstanceError):
        schedule.count = 4  # type: ignore[misc]


def test_occurrences_validate_before_the_first_item_is_asked_for() -> None:
    with pytest.raises(ValidationError):
        occurrences({"recurrence": {"frequency": "Fortnight"}}, now=NOW)


def test_occurrences_are_lazy_and_unbounded_without_count_or_end() -> None:
    it = occurrences({"recurrence": {"frequency": "Minute"}}, now=NOW)
    assert next(islice(it, 100_000, None)) == NOW + timedelta(minutes=100_000)


# --------------------------------------------------------------- lenient input shapes


@pytest.mark.parametrize("recurrence", [
    pytest.param({"frequency": "MONTH", "schedule": {"monthlyOccurrences": [
        {"day": "FRIDAY", "occurrence": -1}]}}, id="enum and day names in any case"),
    pytest.param({"frequency": "month", "schedule": {"monthlyOccurrences": [
        {"day": "friday", "Occurrence": -1}]}}, id="Occurrence as the SDK spells it"),
    pytest.param({"frequency": "Month", "schedule": {"monthlyOccurrences":
        {"day": "Friday", "occurrence": -1}}}, id="a scalar occurrence object"),
    pytest.param({"frequency": "Month", "interval": None, "count": None, "endTime": None,
                  "timeZone": None, "schedule": {"monthlyOccurrences": [
                      {"day": "Friday", "occurrence": -1}], "monthDays": None}},
                 id="JSON null means not given"),
])  # fmt: skip
def test_lenient_shapes_mean_the_same_schedule(recurrence: dict[str, Any]) -> None:
    job = {"startTime": "2026-01-01T09:00:00Z", "recurrence": recurrence, "action": {"x": 1}}
    assert first(job, NOW, 2) == [utc("2026-03-27 09:00"), utc("2026-04-24 09:00")]


def test_scalar_hours_and_minutes_are_one_element_lists() -> None:
    job = {"startTime": "2026-03-04T00:00:00Z",
           "recurrence": {"frequency": "Day", "schedule": {"hours": 5, "minutes": 15}}}  # fmt: skip
    assert first(job, NOW, 2) == [utc("2026-03-05 05:15"), utc("2026-03-06 05:15")]


def test_an_empty_schedule_is_no_schedule() -> None:
    for frequency in ("Minute", "Week"):
        with_empty = {"startTime": PAST, "recurrence": {"frequency": frequency, "schedule": {}}}
        without = {"startTime": PAST, "recurrence": {"frequency": frequency}}
        assert first(with_empty, NOW, 5) == first(without, NOW, 5)


@pytest.mark.parametrize("text", [
    pytest.param("2026-03-06T08:00:00Z", id="Z"),
    pytest.param("2026-03-06T08:00Z", id="no seconds"),
    pytest.param("2026-03-06T08:00:00.0000000Z", id="seven fraction digits (.NET)"),
    pytest.param("2026-03-06T09:00:00+01:00", id="an offset"),
    pytest.param("20260306T080000Z", id="basic format"),
    pytest.param("2026-03-06 08:00:00", id="a space for T, no offset: UTC"),
])  # fmt: skip
def test_iso_8601_spellings_of_one_instant(text: str) -> None:
    job = {"startTime": text, "recurrence": {"frequency": "Day"}}
    assert parse_schedule(job, now=NOW).reference == utc("2026-03-06 08:00")


def test_start_time_as_a_datetime_object() -> None:
    job = {"startTime": datetime(2026, 3, 6, 8, 0), "recurrence": {"frequency": "Day"}}
    assert first(job, NOW, 1) == [utc("2026-03-06 08:00")]
