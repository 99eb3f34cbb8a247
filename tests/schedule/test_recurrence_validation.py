"""Every validation rule of the schedule semantics: a ValidationError naming the JSON path
of the offending value (what the API turns into a 400), never another exception."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from scheduler_lib.api.errors import http_status
from scheduler_lib.errors import ValidationError
from scheduler_lib.schedule.recurrence import parse_schedule

NOW = datetime(2026, 3, 4, 10, 0, tzinfo=UTC)
S = "recurrence.schedule"
case = pytest.param


def recurrence(frequency: str = "Day", **fields: Any) -> dict[str, Any]:
    return {"recurrence": {"frequency": frequency, **fields}}


def schedule(frequency: str, **fields: Any) -> dict[str, Any]:
    return recurrence(frequency, schedule=fields)


INVALID = [
    # The job and its recurrence object
    case(["not", "an", "object"], "properties", "JSON object", id="job not an object"),
    case({"recurrence": "daily"}, "recurrence", "JSON object", id="recurrence not an object"),
    case(recurrence(every="day"), "recurrence.every", "not a known field",
                 id="unknown recurrence field"),
    # frequency
    case({"recurrence": {"interval": 2}}, "recurrence.frequency", "required",
                 id="frequency missing"),
    case(recurrence("Fortnight"), "recurrence.frequency", "Fortnight", id="frequency unknown"),
    case(recurrence("Second"), "recurrence.frequency", "Second", id="frequency Second"),
    case(recurrence(7), "recurrence.frequency", "Minute, Hour", id="frequency not a string"),
    # interval
    case(recurrence(interval="2"), "recurrence.interval", "integer", id="interval a string"),
    case(recurrence(interval=2.5), "recurrence.interval", "integer", id="interval a float"),
    case(recurrence(interval=True), "recurrence.interval", "integer", id="interval a bool"),
    case(recurrence(interval=0), "recurrence.interval", "between 1 and 548", id="interval 0"),
    case(recurrence(interval=-3), "recurrence.interval", "between 1", id="interval negative"),
    case(recurrence("Minute", interval=1001), "recurrence.interval", "1000",
                 id="Minute interval over 1000"),
    case(recurrence("Hour", interval=1001), "recurrence.interval", "1000",
                 id="Hour interval over 1000"),
    case(recurrence("Day", interval=549), "recurrence.interval", "548",
                 id="Day interval over 548"),
    case(recurrence("Week", interval=79), "recurrence.interval", "78",
                 id="Week interval over 78"),
    case(recurrence("Month", interval=19), "recurrence.interval", "18",
                 id="Month interval over 18"),
    case(recurrence("Year", interval=101), "recurrence.interval", "100",
                 id="Year interval over 100"),
    # count
    case(recurrence(count=0), "recurrence.count", "and 2147483647", id="count 0"),
    case(recurrence(count=-2), "recurrence.count", "and 2147483647", id="count negative"),
    case(recurrence(count=2**31), "recurrence.count", "and 2147483647", id="count 2^31"),
    case(recurrence(count="3"), "recurrence.count", "integer", id="count a string"),
    # date-times
    case({"startTime": "next Tuesday"}, "startTime", "ISO 8601", id="startTime not ISO"),
    case({"startTime": "2026-02-30T09:00:00Z"}, "startTime", "ISO 8601",
                 id="startTime not a calendar date"),
    case({"startTime": 1772618400}, "startTime", "ISO 8601", id="startTime a number"),
    case(recurrence(endTime="soon"), "recurrence.endTime", "ISO 8601", id="endTime not ISO"),
    case({"startTime": "0001-01-01T00:00:00", "recurrence": {
                     "frequency": "Day", "timeZone": "Asia/Tokyo"}}, "startTime", "range",
                 id="startTime before the calendar begins"),
    # timeZone
    case(recurrence(timeZone="Mars/Olympus_Mons"), "recurrence.timeZone", "unknown",
                 id="timeZone unknown"),
    case(recurrence(timeZone="Eastern Time"), "recurrence.timeZone", "unknown",
                 id="timeZone almost a Windows name"),
    case(recurrence(timeZone="localtime"), "recurrence.timeZone", "unknown",
                 id="timeZone the host's localtime"),
    case(recurrence(timeZone="../../etc/passwd"), "recurrence.timeZone", "unknown",
                 id="timeZone a path"),
    case(recurrence(timeZone=-5), "recurrence.timeZone", "name", id="timeZone a number"),
    # schedule: shape and the frequencies each field belongs to
    case(recurrence(schedule=[1]), S, "JSON object", id="schedule not an object"),
    case(schedule("Day", hour=[5]), f"{S}.hour", "not a known field",
                 id="unknown schedule field"),
    case(schedule("Minute", minutes=[5]), S, "no schedule", id="Minute with a schedule"),
    case(schedule("Hour", hours=[5]), f"{S}.hours", "Day", id="hours with Hour"),
    case(schedule("Day", weekDays=["Monday"]), f"{S}.weekDays", "Week",
                 id="weekDays with Day"),
    case(schedule("Month", weekDays=["Monday"]), f"{S}.weekDays", "Week",
                 id="weekDays with Month"),
    case(schedule("Week", monthDays=[1]), f"{S}.monthDays", "Month or Year",
                 id="monthDays with Week"),
    case(schedule("Day", monthlyOccurrences=[{"day": "Friday"}]),
                 f"{S}.monthlyOccurrences", "Month or Year", id="monthlyOccurrences with Day"),
    case(schedule("Month", months=[1]), f"{S}.months", "Year", id="months with Month"),
    # schedule values
    case(schedule("Day", minutes=[0, 60]), f"{S}.minutes[1]", "between 0 and 59",
                 id="minute 60"),
    case(schedule("Day", minutes=-1), f"{S}.minutes", "between 0 and 59",
                 id="minute -1 as a scalar"),
    case(schedule("Day", minutes=["5"]), f"{S}.minutes[0]", "integer", id="minute a string"),
    case(schedule("Day", minutes=[]), f"{S}.minutes", "at least one", id="minutes empty"),
    case(schedule("Day", hours=[24]), f"{S}.hours[0]", "between 0 and 23", id="hour 24"),
    case(schedule("Month", monthDays=[0]), f"{S}.monthDays[0]", "not 0", id="monthDay 0"),
    case(schedule("Month", monthDays=[32]), f"{S}.monthDays[0]", "-31 and 31",
                 id="monthDay 32"),
    case(schedule("Month", monthDays=[1, -32]), f"{S}.monthDays[1]", "-31 and 31",
                 id="monthDay -32"),
    case(schedule("Year", months=[0]), f"{S}.months[0]", "between 1 and 12", id="month 0"),
    case(schedule("Year", months=[13]), f"{S}.months[0]", "between 1 and 12",
                 id="month 13"),
    case(schedule("Week", weekDays=["Funday"]), f"{S}.weekDays[0]", "not a day name",
                 id="weekDay unknown"),
    case(schedule("Week", weekDays=["Mon"]), f"{S}.weekDays[0]", "not a day name",
                 id="weekDay abbreviated"),
    case(schedule("Week", weekDays=[1]), f"{S}.weekDays[0]", "not a day name",
                 id="weekDay a number"),
    case(schedule("Week", weekDays=["Monday"] * 8), f"{S}.weekDays", "at most 7",
                 id="weekDays more than 7"),
    case(schedule("Week", weekDays=["Monday", "monday"]), f"{S}.weekDays",
                 "Monday more than once", id="weekDays repeated"),
    case(schedule("Month", monthlyOccurrences=["Friday"]), f"{S}.monthlyOccurrences[0]",
                 "object", id="monthlyOccurrence not an object"),
    case(schedule("Month", monthlyOccurrences=[{"occurrence": 1}]),
                 f"{S}.monthlyOccurrences[0].day", "required", id="monthlyOccurrence without day"),
    case(schedule("Month", monthlyOccurrences=[{"day": "Fri"}]),
                 f"{S}.monthlyOccurrences[0].day", "not a day name", id="monthlyOccurrence day"),
    case(schedule("Month", monthlyOccurrences=[{"day": "Friday", "occurrence": 0}]),
                 f"{S}.monthlyOccurrences[0].occurrence", "not 0", id="occurrence 0"),
    case(schedule("Month", monthlyOccurrences=[{"day": "Friday"},
                                                       {"day": "Friday", "occurrence": 6}]),
                 f"{S}.monthlyOccurrences[1].occurrence", "-5 and 5", id="occurrence 6"),
    case(schedule("Month", monthlyOccurrences=[{"day": "Friday", "Occurrence": -6}]),
                 f"{S}.monthlyOccurrences[0].Occurrence", "-5 and 5", id="Occurrence -6"),
    case(schedule("Month", monthlyOccurrences=[{"day": "Friday", "occurrence": "last"}]),
                 f"{S}.monthlyOccurrences[0].occurrence", "integer", id="occurrence a string"),
    case(schedule("Month", monthlyOccurrences=[{"day": "Friday", "occurrence": 1,
                                                        "Occurrence": 2}]),
                 f"{S}.monthlyOccurrences[0].occurrence", "twice", id="occurrence given twice"),
    case(schedule("Month", monthlyOccurrences=[{"day": "Friday", "week": 2}]),
                 f"{S}.monthlyOccurrences[0].week", "not a known field",
                 id="unknown monthlyOccurrence field"),
]  # fmt: skip


@pytest.mark.parametrize(("job", "field", "message"), INVALID)
def test_invalid_timing_names_the_field(job: Any, field: str, message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        parse_schedule(job, now=NOW)
    assert caught.value.field == field
    assert message in caught.value.message
    assert caught.value.message.startswith(field)
    assert http_status(caught.value) == 400


@pytest.mark.parametrize(("frequency", "interval"), [
    ("Minute", 1000), ("Hour", 1000), ("Day", 548), ("Week", 78), ("Month", 18), ("Year", 100),
])  # fmt: skip
def test_largest_intervals_are_accepted(frequency: str, interval: int) -> None:
    assert parse_schedule(recurrence(frequency, interval=interval), now=NOW).first() == NOW


def test_every_week_day_once_is_accepted() -> None:
    days = ["sunday", "Monday", "TUESDAY", "wednesday", "thursday", "friday", "saturday"]
    job = {"startTime": "2026-03-04T09:00:00Z", **schedule("Week", weekDays=days)}
    assert parse_schedule(job, now=NOW).next_after(NOW) == datetime(2026, 3, 5, 9, tzinfo=UTC)


def test_repeated_values_in_other_lists_are_merged() -> None:
    """Only weekDays forbids repeats; elsewhere a repeat selects the same time once."""
    job = {"startTime": "2026-03-04T09:00:00Z", **schedule("Day", hours=[5, 5], minutes=[0, 0])}
    schedule_ = parse_schedule(job, now=NOW)
    assert schedule_.first() == datetime(2026, 3, 5, 5, tzinfo=UTC)
    assert schedule_.next_after(schedule_.first()) == datetime(2026, 3, 6, 5, tzinfo=UTC)
