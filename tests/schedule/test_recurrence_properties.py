"""Property tests of the recurrence engine against two independent references.

1. A brute-force oracle written here from docs/schedule.md alone: it walks the
   evaluation zone's wall clock minute by minute (elapsed minutes for Hour), checks each
   reading against the schedule's rules, and resolves readings to instants by probing the
   zone's offsets (not by PEP 495 folds, as the engine does).
2. `dateutil.rrule` for UTC schedules, each mapped to the RRULE it means.

Both feed the same statement of the startTime table, count and endTime (`_executions`).
Example counts are capped so the file runs in well under a minute on two cores.
"""

from __future__ import annotations

import calendar
from datetime import UTC, date, datetime, timedelta
from itertools import islice
from typing import Any
from zoneinfo import ZoneInfo

from dateutil import rrule
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tzlocal.windows_tz import win_tz

from scheduler_lib.schedule.recurrence import occurrences, parse_schedule

WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
#: Zones whose offsets change by whole hours (Hour frequency's minutes are wall-clock minutes
#: there), from both hemispheres, with a half-hour base offset, and Windows names.
ZONES = [None, "America/New_York", "Europe/London", "Australia/Sydney", "Asia/Kolkata",
         "America/St_Johns", "Eastern Standard Time", "GMT Standard Time"]  # fmt: skip
#: Per zone, days of daylight-saving changes (and month ends, leap days), so that examples
#: often cross one.
_US, _EU = [date(2026, 3, 8), date(2026, 11, 1)], [date(2026, 3, 29), date(2026, 10, 25)]
SPECIAL_DAYS = {
    None: [date(2024, 2, 28), date(2027, 12, 30), date(2026, 1, 30)],
    "America/New_York": _US, "Eastern Standard Time": _US, "America/St_Johns": _US,
    "Europe/London": _EU, "GMT Standard Time": _EU,
    "Australia/Sydney": [date(2026, 4, 5), date(2026, 10, 4)],
    "Asia/Kolkata": [date(2028, 2, 28), date(2026, 4, 30)],
}  # fmt: skip
TAKE = 8
ONE_MINUTE = timedelta(minutes=1)
PROFILE = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------- the oracle


def _zone(name: str | None) -> ZoneInfo:
    return ZoneInfo(win_tz.get(name, name) if name else "UTC")


def _wall(instant: datetime, zone: ZoneInfo) -> datetime:
    return instant.astimezone(zone).replace(tzinfo=None)


def _resolve(wall: datetime, zone: ZoneInfo) -> datetime:
    """The instant of a wall reading: the earliest that shows it, else (a gap) the reading
    moved forward by the gap, i.e. read with the offset in force before the gap."""
    before = (wall - timedelta(days=1)).replace(tzinfo=UTC).astimezone(zone).utcoffset()
    after = (wall + timedelta(days=1)).replace(tzinfo=UTC).astimezone(zone).utcoffset()
    showing = [(wall - offset).replace(tzinfo=UTC) for offset in {before, after}]
    showing = [instant for instant in showing if _wall(instant, zone) == wall]
    return min(showing) if showing else (wall - before).replace(tzinfo=UTC)


def _read_instant(text: str | None, zone: ZoneInfo) -> datetime | None:
    if text is None:
        return None
    value = datetime.fromisoformat(text)
    return value.astimezone(UTC) if value.tzinfo else _resolve(value, zone)


def _up(instant: datetime | None) -> datetime | None:
    """R and the creation instant rounded up to a whole second, as the engine reads them."""
    if instant is None or not instant.microsecond:
        return instant
    return instant.replace(microsecond=0) + timedelta(seconds=1)


def _period(day: date, ref: date, frequency: str) -> int:
    if frequency == "Day":
        return (day - ref).days
    if frequency == "Week":
        return (
            (day - timedelta(days=day.weekday())) - (ref - timedelta(days=ref.weekday()))
        ).days // 7
    if frequency == "Month":
        return (day.year - ref.year) * 12 + day.month - ref.month
    return day.year - ref.year


def _day_selected(day: date, ref: date, frequency: str, schedule: dict[str, Any]) -> bool:
    if frequency == "Week":
        names = schedule.get("weekDays") or [WEEKDAYS[ref.weekday()]]
        return WEEKDAYS[day.weekday()] in names
    if frequency == "Day":
        return True
    if frequency == "Year" and day.month not in (schedule.get("months") or [ref.month]):
        return False
    month_days = schedule.get("monthDays")
    occurrences_ = schedule.get("monthlyOccurrences")
    if month_days is None and occurrences_ is None:
        month_days = [ref.day]
    length = calendar.monthrange(day.year, day.month)[1]
    if any(day.day == (n if n > 0 else length + 1 + n) for n in month_days or []):
        return True
    for item in occurrences_ or []:
        n = item.get("occurrence")
        if WEEKDAYS[day.weekday()] == item["day"] and (
            n is None or (day.day - 1) // 7 + 1 == n or (length - day.day) // 7 + 1 == -n
        ):
            return True
    return False


def _scheduled(
    job: dict[str, Any], now: datetime, until: datetime, since: datetime | None = None
) -> list[datetime]:
    """Every time the schedule's rules select in [R, until] (and after `since`), by brute
    force: walking minutes from where `since` is (less a margin) rather than from R."""
    recurrence = job["recurrence"]
    zone = _zone(recurrence.get("timeZone"))
    reference = _up(_read_instant(job.get("startTime"), zone)) or _up(now)
    ref_wall = _wall(reference, zone)
    frequency, interval = recurrence["frequency"].title(), recurrence.get("interval", 1)
    schedule = recurrence.get("schedule") or {}
    minutes = schedule.get("minutes") or [ref_wall.minute]
    found: set[datetime] = set()
    since = reference if since is None else max(since, reference)
    if frequency == "Minute":
        step = interval * ONE_MINUTE
        instant = reference + (since - reference) // step * step
        while instant <= until:
            found.add(instant)
            instant += interval * ONE_MINUTE
    elif frequency == "Hour":
        hour_start = reference - timedelta(minutes=ref_wall.minute, seconds=ref_wall.second,
                                           microseconds=ref_wall.microsecond)  # fmt: skip
        skip = max((since - hour_start) // timedelta(hours=1) - 2, 0) * timedelta(hours=1)
        instant = hour_start + skip + timedelta(seconds=ref_wall.second,
                                                microseconds=ref_wall.microsecond)  # fmt: skip
        while instant <= until:
            hour = (instant - hour_start) // timedelta(hours=1)
            if hour % interval == 0 and _wall(instant, zone).minute in minutes:
                found.add(instant)
            instant += ONE_MINUTE
    else:
        hours = schedule.get("hours") or (range(24) if "minutes" in schedule else [ref_wall.hour])
        day = max(ref_wall.date(), _wall(since, zone).date() - timedelta(days=2))
        last = _wall(until, zone).date() + timedelta(days=2)
        while day <= last:
            number = _period(day, ref_wall.date(), frequency)
            if number % interval == 0 and _day_selected(day, ref_wall.date(), frequency, schedule):
                wall = datetime(day.year, day.month, day.day, second=ref_wall.second,
                                microsecond=ref_wall.microsecond)  # fmt: skip
                for _ in range(24 * 60):
                    if wall.hour in hours and wall.minute in minutes:
                        found.add(_resolve(wall, zone))
                    wall += ONE_MINUTE
            day += timedelta(days=1)
    return sorted(t for t in found if since <= t <= until)


def _executions(job: dict[str, Any], now: datetime, scheduled: list[datetime]) -> list[datetime]:
    """The startTime table, count and endTime applied to the schedule's times."""
    recurrence = job["recurrence"]
    zone = _zone(recurrence.get("timeZone"))
    start, now = _up(_read_instant(job.get("startTime"), zone)), _up(now)
    if start is None:
        runs = [now] + [t for t in scheduled if t > now]
    else:
        runs = [t for t in scheduled if t >= max(start, now)]
    end = _read_instant(recurrence.get("endTime"), zone)
    runs = [t for t in runs if end is None or t <= end]
    return runs[: recurrence.get("count")]


# ---------------------------------------------------------------- strategies


def _subset(values: list[Any], max_size: int) -> st.SearchStrategy[list[Any]]:
    return st.lists(st.sampled_from(values), min_size=1, max_size=max_size, unique=True)


@st.composite
def jobs(draw: st.DrawFn, zones: list[str | None] = ZONES) -> tuple[dict[str, Any], datetime]:
    """(job properties, creation instant) around DST changes, month ends and leap days."""
    frequency = draw(st.sampled_from(["Minute", "Hour", "Day", "Week", "Month", "Year"]))
    top = {"Minute": 120, "Hour": 6, "Day": 4, "Week": 3, "Month": 3, "Year": 2}[frequency]
    recurrence: dict[str, Any] = {
        "frequency": draw(st.sampled_from([frequency, frequency.lower()]))
    }
    if draw(st.booleans()):
        recurrence["interval"] = draw(st.integers(1, top))
    schedule: dict[str, Any] = {}
    if frequency != "Minute" and draw(st.booleans()):
        schedule["minutes"] = draw(st.one_of(_subset([0, 30], 2), _subset(list(range(60)), 4)))
    if frequency not in ("Minute", "Hour") and draw(st.booleans()):
        # Often the small hours, where daylight saving changes the clocks.
        schedule["hours"] = draw(st.one_of(_subset([0, 1, 2, 3], 4), _subset(list(range(24)), 4)))
    if frequency == "Week" and draw(st.booleans()):
        schedule["weekDays"] = draw(_subset(WEEKDAYS, 7))
    if frequency in ("Month", "Year"):
        if draw(st.booleans()):
            schedule["monthDays"] = draw(_subset([*range(-31, 0), *range(1, 32)], 4))
        if draw(st.booleans()):
            schedule["monthlyOccurrences"] = draw(st.lists(st.fixed_dictionaries(
                {"day": st.sampled_from(WEEKDAYS)},
                optional={"occurrence": st.sampled_from([-5, -4, -3, -2, -1, 1, 2, 3, 4, 5])},
            ), min_size=1, max_size=3))  # fmt: skip
    if frequency == "Year" and draw(st.booleans()):
        schedule["months"] = draw(_subset(list(range(1, 13)), 3))
    if schedule:
        recurrence["schedule"] = schedule
    zone_name = draw(st.sampled_from(zones))
    if zone_name:
        recurrence["timeZone"] = zone_name
    anchor = draw(
        st.one_of(
            st.sampled_from(SPECIAL_DAYS[zone_name]), st.dates(date(2020, 1, 1), date(2030, 12, 31))
        )
    )
    start = datetime(anchor.year, anchor.month, anchor.day) + timedelta(
        minutes=draw(st.integers(-3 * 1440, 3 * 1440)), seconds=draw(st.integers(0, 59))
    )
    zone = _zone(zone_name)
    job: dict[str, Any] = {"recurrence": recurrence}
    if draw(st.booleans()):  # a wall reading in the zone, or the same instant in UTC with Z
        job["startTime"] = start.isoformat()
        start_instant = _resolve(start, zone)
        if draw(st.booleans()):
            job["startTime"] = start_instant.strftime("%Y-%m-%dT%H:%M:%SZ")
        now = start_instant + timedelta(minutes=draw(st.integers(-10 * 1440, 10 * 1440)))
    else:
        now = _resolve(start, zone) + timedelta(microseconds=draw(st.sampled_from([0, 250_000])))
    if draw(st.integers(0, 3)) == 0:
        recurrence["count"] = draw(st.integers(1, 10))
    if draw(st.integers(0, 3)) == 0:
        end = now + timedelta(minutes=draw(st.integers(-1440, 60 * 1440)))
        recurrence["endTime"] = end.strftime("%Y-%m-%dT%H:%M:%SZ")
    return job, now


def _horizon(job: dict[str, Any], now: datetime, listed: list[datetime]) -> datetime:
    """Where to stop comparing: the last listed execution, or far enough to be sure that an
    engine that stopped early was right to."""
    if len(listed) == TAKE:
        return listed[-1]
    span = {"Minute": 1, "Hour": 3, "Day": 40, "Week": 210, "Month": 3 * 366, "Year": 12 * 366}
    horizon = now + timedelta(days=span[job["recurrence"]["frequency"].title()])
    return max([horizon, *listed])


# ---------------------------------------------------------------- properties


@PROFILE
@given(jobs())
def test_engine_matches_the_minute_by_minute_oracle(case: tuple[dict[str, Any], datetime]) -> None:
    job, now = case
    listed = list(islice(occurrences(job, now=now), TAKE))
    until = _horizon(job, now, listed)
    zone = _zone(job["recurrence"].get("timeZone"))
    start = _up(_read_instant(job.get("startTime"), zone)) or _up(now)
    expected = _executions(job, now, _scheduled(job, now, until))
    assert listed == [t for t in expected if t <= until][:TAKE]
    assert all(t.tzinfo is UTC for t in listed)
    assert parse_schedule(job, now=now).reference == start


@PROFILE
@given(jobs(), st.integers(0, 10**9 - 1))
def test_next_after_is_the_first_listed_execution_after_the_instant(
    case: tuple[dict[str, Any], datetime], billionths: int
) -> None:
    job, now = case
    job["recurrence"].pop("count", None)
    schedule = parse_schedule(job, now=now)
    listed = list(islice(occurrences(job, now=now), 30))
    low = min(now, schedule.reference) - timedelta(days=3)
    high = listed[-1] if len(listed) == 30 else max([now, *listed]) + timedelta(days=30)
    span = (high - low) // timedelta(microseconds=1)
    instant = low + timedelta(microseconds=span * billionths // 10**9)  # below `high`
    assert schedule.next_after(instant) == next((t for t in listed if t > instant), None)
    for t in listed[:5]:  # from an execution itself: the next one
        assert schedule.next_after(t) == next((u for u in listed if u > t), None)


@PROFILE
@given(jobs(), st.integers(1, 300 * 366), st.integers(0, 1440 * 60))
def test_next_after_far_in_the_future_agrees_with_the_oracle(
    case: tuple[dict[str, Any], datetime], days: int, seconds: int
) -> None:
    """Seeking, not replaying: the answer years later is the oracle's first scheduled time
    after the instant (the oracle walks only a window around it)."""
    job, now = case
    job["recurrence"].pop("count", None)
    job["recurrence"].pop("endTime", None)
    schedule = parse_schedule(job, now=now)
    instant = max(now, schedule.reference) + timedelta(days=days, seconds=seconds)
    answer = schedule.next_after(instant)
    window = {"Minute": 1, "Hour": 1, "Day": 6, "Week": 25, "Month": 100, "Year": 800}
    until = instant + timedelta(days=window[job["recurrence"]["frequency"].title()])
    found = [t for t in _scheduled(job, now, until, since=instant) if t > instant]
    if answer is None or answer > until:
        assert not found
    else:
        assert found[0] == answer


def _rrule(job: dict[str, Any], reference: datetime, until: datetime) -> rrule.rruleset:
    """The RRULE (a set of them when monthDays and monthlyOccurrences are combined)."""
    recurrence = job["recurrence"]
    frequency = recurrence["frequency"].title()
    schedule = recurrence.get("schedule") or {}
    dtstart = reference.replace(tzinfo=None)
    options: dict[str, Any] = {"dtstart": dtstart, "interval": recurrence.get("interval", 1),
                               "wkst": rrule.MO, "bysecond": dtstart.second,
                               "until": until.replace(tzinfo=None)}  # fmt: skip
    if frequency != "Minute":
        options["byminute"] = schedule.get("minutes") or dtstart.minute
    if frequency not in ("Minute", "Hour"):
        options["byhour"] = schedule.get("hours") or (
            range(24) if "minutes" in schedule else dtstart.hour
        )
    if frequency == "Week":
        days = [
            WEEKDAYS.index(d) for d in schedule.get("weekDays") or [WEEKDAYS[dtstart.weekday()]]
        ]
        options["byweekday"] = days
    if frequency == "Year":
        options["bymonth"] = schedule.get("months") or dtstart.month
    code = {"Minute": rrule.MINUTELY, "Hour": rrule.HOURLY, "Day": rrule.DAILY,
            "Week": rrule.WEEKLY, "Month": rrule.MONTHLY,
            "Year": rrule.YEARLY}[frequency]  # fmt: skip
    rules = rrule.rruleset()
    if frequency in ("Month", "Year"):
        month_days = schedule.get("monthDays")
        listed = schedule.get("monthlyOccurrences")
        if month_days is None and listed is None:
            month_days = [dtstart.day]
        if month_days:
            rules.rrule(rrule.rrule(code, bymonthday=month_days, **options))
        for item in listed or []:  # one rule each: RRULE intersects BYDAY with BYDAY(n)
            day = rrule.weekdays[WEEKDAYS.index(item["day"])](item.get("occurrence"))
            rules.rrule(rrule.rrule(code, byweekday=day, **options))
    else:
        rules.rrule(rrule.rrule(code, **options))
    return rules


def _selects_a_day_every_month(job: dict[str, Any]) -> bool:
    """True unless a Month/Year schedule may skip months: rrule would search to year 9999."""
    schedule = job["recurrence"].get("schedule") or {}
    days = schedule.get("monthDays") or []
    listed = schedule.get("monthlyOccurrences") or []
    if not days and not listed:
        return True  # R's own day: present in R's month, and rrule stops at R's skips quickly
    return any(abs(d) <= 28 for d in days) or any(
        abs(o.get("occurrence") or 1) <= 4 for o in listed
    )


@PROFILE
@given(jobs(zones=[None]))
def test_utc_engine_matches_dateutil_rrule(case: tuple[dict[str, Any], datetime]) -> None:
    job, now = case
    assume(_selects_a_day_every_month(job))
    now = now.replace(microsecond=0)  # rrule works in whole seconds
    listed = list(islice(occurrences(job, now=now), TAKE))
    until = _horizon(job, now, listed)
    reference = _read_instant(job.get("startTime"), _zone(None)) or now
    scheduled = [t.replace(tzinfo=UTC) for t in _rrule(job, reference, until).between(
        reference.replace(tzinfo=None), until.replace(tzinfo=None), inc=True)]  # fmt: skip
    assert listed == [t for t in _executions(job, now, scheduled) if t <= until][:TAKE]
