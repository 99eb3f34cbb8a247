"""Evaluation zones and daylight saving, by hand-checked examples.

2026 changes used here: New York springs forward Sun 03-08 02:00 EST -> 03:00 EDT and falls
back Sun 11-01 02:00 EDT -> 01:00 EST; London springs forward Sun 03-29 01:00 GMT -> 02:00
BST and falls back Sun 10-25 02:00 BST -> 01:00 GMT; Sydney falls back Sun 04-05 03:00 AEDT
-> 02:00 AEST.
"""

from __future__ import annotations

from datetime import UTC, datetime
from itertools import islice
from typing import Any

import pytest

from scheduler_lib.schedule.recurrence import occurrences, parse_schedule
from scheduler_lib.schedule.timezones import resolve_zone


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def wall(text: str) -> datetime:
    return datetime.fromisoformat(text)


def runs(start: str, zone: str, n: int, frequency: str = "Day", **schedule: Any) -> list[datetime]:
    """The first n executions of a job created long before its (wall-clock) startTime."""
    recurrence = {"frequency": frequency, "timeZone": zone, "schedule": schedule or None}
    job = {"startTime": start, "recurrence": recurrence}
    return list(islice(occurrences(job, now=utc("2000-01-01 00:00")), n))


# ------------------------------------------------------------------------- naming zones


@pytest.mark.parametrize(("name", "key", "is_utc"), [
    pytest.param("America/New_York", "America/New_York", False, id="IANA name"),
    pytest.param("Eastern Standard Time", "America/New_York", False, id="Windows name"),
    pytest.param("GMT Standard Time", "Europe/London", False, id="Windows name for London"),
    pytest.param("AUS Eastern Standard Time", "Australia/Sydney", False, id="Windows, Sydney"),
    pytest.param("europe/london", "Europe/London", False, id="IANA name in another case"),
    pytest.param("eastern standard time", "America/New_York", False, id="Windows, other case"),
    pytest.param("US/Eastern", "US/Eastern", False, id="a backward-compatible link"),
    pytest.param("UTC", "UTC", True, id="UTC"),
    pytest.param("Etc/UTC", "Etc/UTC", True, id="Etc/UTC"),
    pytest.param("Coordinated Universal Time", None, None, id="not a name of UTC"),
    pytest.param("Mars/Olympus_Mons", None, None, id="unknown"),
    pytest.param("localtime", None, None, id="the host's local time is not a zone"),
    pytest.param("Factory", None, None, id="Factory is not a zone"),
    pytest.param("", None, None, id="empty"),
])  # fmt: skip
def test_resolve_zone(name: str, key: str | None, is_utc: bool | None) -> None:
    if key is None:
        with pytest.raises(LookupError):
            resolve_zone(name)
        return
    zone = resolve_zone(name)
    assert (zone.name, zone.is_utc) == (key, is_utc)


def test_windows_utc_is_the_fast_utc_zone() -> None:
    assert resolve_zone("UTC").is_utc
    zone = resolve_zone("GMT Standard Time")
    assert not zone.is_utc  # London is GMT in winter only


@pytest.mark.parametrize(("zone", "reading", "instant", "reads_back"), [
    pytest.param("America/New_York", "2026-03-08 02:30", "2026-03-08 07:30", "2026-03-08 03:30",
                 id="New York gap: 02:30 runs at 03:30 EDT"),
    pytest.param("America/New_York", "2026-11-01 01:30", "2026-11-01 05:30", "2026-11-01 01:30",
                 id="New York overlap: the earlier 01:30 (EDT)"),
    pytest.param("Europe/London", "2026-03-29 01:30", "2026-03-29 01:30", "2026-03-29 02:30",
                 id="London gap: 01:30 runs at 02:30 BST"),
    pytest.param("Europe/London", "2026-10-25 01:30", "2026-10-25 00:30", "2026-10-25 01:30",
                 id="London overlap: the earlier 01:30 (BST)"),
    pytest.param("America/New_York", "2026-07-01 09:00", "2026-07-01 13:00", "2026-07-01 09:00",
                 id="New York EDT"),
])  # fmt: skip
def test_wall_clock_readings_resolve_to_instants(
    zone: str, reading: str, instant: str, reads_back: str
) -> None:
    evaluation = resolve_zone(zone)
    assert evaluation.instant(wall(reading)) == utc(instant)
    as_reading = utc(reading)  # the engine's form: wall-clock fields, tzinfo UTC
    assert evaluation.resolve(as_reading) == utc(instant)
    assert evaluation.earliest_instant_from(as_reading) <= utc(instant)
    assert evaluation.reading(utc(instant)) == utc(reads_back)


# ------------------------------------------------------- wall-clock schedules across DST


@pytest.mark.parametrize("zone", ["America/New_York", "Eastern Standard Time"])
def test_nine_oclock_in_new_york_moves_in_utc(zone: str) -> None:
    got = runs("2026-03-07T09:00:00", zone, 3)
    assert got == [utc("2026-03-07 14:00"), utc("2026-03-08 13:00"), utc("2026-03-09 13:00")]
    got = runs("2026-10-31T09:00:00", zone, 3)
    assert got == [utc("2026-10-31 13:00"), utc("2026-11-01 14:00"), utc("2026-11-02 14:00")]


@pytest.mark.parametrize("zone", ["Europe/London", "GMT Standard Time"])
def test_nine_oclock_in_london_moves_in_utc(zone: str) -> None:
    spring, autumn = runs("2026-03-28T09:00:00", zone, 2), runs("2026-10-24T09:00:00", zone, 2)
    assert spring == [utc("2026-03-28 09:00"), utc("2026-03-29 08:00")]
    assert autumn == [utc("2026-10-24 08:00"), utc("2026-10-25 09:00")]


def test_southern_hemisphere_falls_back_in_april() -> None:
    got = runs("2026-04-04T09:00:00", "Australia/Sydney", 2)
    assert got == [utc("2026-04-03 22:00"), utc("2026-04-04 23:00")]


def test_weekly_and_monthly_keep_the_wall_clock_too() -> None:
    monthly = runs("2026-03-01T09:00:00", "Europe/London", 2, "Month")
    assert monthly == [utc("2026-03-01 09:00"), utc("2026-04-01 08:00")]
    weekly = runs("2026-03-05T09:00:00", "America/New_York", 2, "Week")
    assert weekly == [utc("2026-03-05 14:00"), utc("2026-03-12 13:00")]


@pytest.mark.parametrize(("zone", "start", "hours", "expected"), [
    pytest.param("America/New_York", "2026-03-07T00:00:00", [2],
                 ["2026-03-07 07:30", "2026-03-08 07:30", "2026-03-09 06:30"],
                 id="New York 02:30 on the spring-forward day runs at 03:30"),
    pytest.param("Europe/London", "2026-03-28T00:00:00", [1],
                 ["2026-03-28 01:30", "2026-03-29 01:30", "2026-03-30 00:30"],
                 id="London 01:30 on the spring-forward day runs at 02:30"),
    pytest.param("America/New_York", "2026-03-07T00:00:00", [2, 3],
                 ["2026-03-07 07:30", "2026-03-07 08:30", "2026-03-08 07:30", "2026-03-09 06:30",
                  "2026-03-09 07:30"],
                 id="02:30 moved onto 03:30 runs once"),
    pytest.param("America/New_York", "2026-10-31T00:00:00", [1],
                 ["2026-10-31 05:30", "2026-11-01 05:30", "2026-11-02 06:30"],
                 id="New York 01:30 on the fall-back day runs once, the earlier"),
])  # fmt: skip
def test_daylight_saving_gaps_and_overlaps(
    zone: str, start: str, hours: list[int], expected: list[str]
) -> None:
    assert runs(start, zone, len(expected), hours=hours, minutes=[30]) == [utc(t) for t in expected]


def test_the_repeated_hour_runs_once_on_a_wall_clock_schedule() -> None:
    """Every 15 minutes in New York on 11-01: 01:00-01:45 EDT, then 02:00 EST (07:00Z)."""
    got = runs("2026-11-01T00:45:00", "America/New_York", 6, minutes=[0, 15, 30, 45])
    assert got == [utc(f"2026-11-01 {t}") for t in ("04:45", "05:00", "05:15", "05:30", "05:45",
                                                      "07:00")]  # fmt: skip


@pytest.mark.parametrize(("frequency", "start", "expected"), [
    pytest.param("Hour", "2026-11-01T00:30:00", ["04:30", "05:30", "06:30", "07:30"],
                 id="Hour across fall-back: 01:30 EDT and 01:30 EST both run"),
    pytest.param("Hour", "2026-03-08T00:30:00", ["05:30", "06:30", "07:30", "08:30"],
                 id="Hour across spring-forward: an hour apart throughout"),
    pytest.param("Minute", "2026-03-08T01:30:00", ["06:30", "07:00", "07:30"],
                 id="Minute across spring-forward"),
])  # fmt: skip
def test_minute_and_hour_step_on_elapsed_time(
    frequency: str, start: str, expected: list[str]
) -> None:
    job = {"startTime": start, "recurrence": {
        "frequency": frequency, "interval": 30 if frequency == "Minute" else 1,
        "timeZone": "America/New_York"}}  # fmt: skip
    day = start[:10]
    got = list(islice(occurrences(job, now=utc("2026-01-01 00:00")), len(expected)))
    assert got == [utc(f"{day} {t}") for t in expected]


# ------------------------------------------------------------- reading startTime/endTime


@pytest.mark.parametrize(("start", "reference"), [
    pytest.param("2026-03-08T02:30:00", "2026-03-08 07:30", id="a reading in the gap"),
    pytest.param("2026-11-01T01:30:00", "2026-11-01 05:30", id="a repeated reading: earlier"),
    pytest.param("2026-03-04", "2026-03-04 05:00", id="a date alone: 00:00 in the zone"),
    pytest.param("2026-03-04T09:00:00+01:00", "2026-03-04 08:00", id="an offset wins"),
    pytest.param("2026-03-04T09:00:00Z", "2026-03-04 09:00", id="Z is UTC"),
])  # fmt: skip
def test_start_time_without_offset_is_read_in_the_time_zone(start: str, reference: str) -> None:
    job = {"startTime": start, "recurrence": {"frequency": "Day", "timeZone": "America/New_York"}}
    assert parse_schedule(job, now=utc("2026-01-01 00:00")).reference == utc(reference)


def test_an_offset_locates_the_instant_but_the_zone_still_evaluates() -> None:
    """09:00+01:00 is 03:00 in New York: the job runs at 03:00 New York time, across DST."""
    got = runs("2026-03-06T09:00:00+01:00", "America/New_York", 3)
    assert got == [utc("2026-03-06 08:00"), utc("2026-03-07 08:00"), utc("2026-03-08 07:00")]


def test_end_time_date_alone_is_midnight_in_the_zone() -> None:
    job = {"startTime": "2026-03-08T23:00:00", "recurrence": {
        "frequency": "Day", "timeZone": "America/New_York", "endTime": "2026-03-10"}}  # fmt: skip
    got = list(occurrences(job, now=utc("2026-01-01 00:00")))
    assert got == [utc("2026-03-09 03:00"), utc("2026-03-10 03:00")]


# -------------------------------------------------------------- zones with odd changes


def test_a_skipped_day_runs_its_times_on_the_next_day_once() -> None:
    """Samoa skipped 2011-12-30 (24 hours from -10 to +14): its 10:00 lands on 12-31 10:00,
    the same instant as 12-31's own 10:00, and runs once."""
    got = runs("2011-12-29T10:00:00", "Pacific/Apia", 3)
    assert got == [utc("2011-12-29 20:00"), utc("2011-12-30 20:00"), utc("2011-12-31 20:00")]


def test_seeking_finds_a_time_pushed_out_of_its_own_day() -> None:
    """Every 2 days from 12-28 selects 12-30, which Samoa skipped: from a later reading of
    12-31 the next execution is 12-30's 23:00, pushed to 12-31 23:00 (+14) = 09:00Z."""
    job = {"startTime": "2011-12-28T23:00:00", "recurrence": {
        "frequency": "Day", "interval": 2, "timeZone": "Pacific/Apia"}}  # fmt: skip
    schedule = parse_schedule(job, now=utc("2011-12-01 00:00"))
    assert schedule.next_after(utc("2011-12-30 16:00")) == utc("2011-12-31 09:00")  # 12-31 06:00
    assert schedule.next_after(utc("2011-12-31 09:00")) == utc("2012-01-01 09:00")  # 01-01 23:00


def test_hour_frequency_keeps_elapsed_hours_across_a_half_hour_change() -> None:
    """Lord Howe Island springs forward by 30 minutes (02:00 -> 02:30 on 2026-10-04): Hour
    steps whole elapsed hours from the hour containing R, so on-the-hour runs read :30 after
    the change (documented in docs/schedule.md)."""
    recurrence = {"frequency": "Hour", "timeZone": "Australia/Lord_Howe",
                  "schedule": {"minutes": [0]}}  # fmt: skip
    job = {"startTime": "2026-10-04T00:00:00", "recurrence": recurrence}
    got = list(islice(occurrences(job, now=utc("2026-01-01 00:00")), 4))
    assert got == [utc(f"2026-10-03 {t}") for t in ("13:30", "14:30", "15:30", "16:30")]
    zone = resolve_zone("Australia/Lord_Howe").tzinfo
    assert [f"{t.astimezone(zone):%H:%M}" for t in got] == ["00:00", "01:00", "02:30", "03:30"]


def test_a_half_hour_gap_moves_a_time_forward_by_half_an_hour() -> None:
    got = runs("2026-10-03T02:15:00", "Australia/Lord_Howe", 2)
    assert got == [utc("2026-10-02 15:45"), utc("2026-10-03 15:45")]  # 02:15, then 02:45 (+11)
