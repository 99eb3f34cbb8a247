"""Periods of the Day, Week, Month and Year frequencies, in wall-clock terms.

This is dateutil rrule's decomposition (candidate days of a period, then the day filters,
then the times of each day) with one twist for speed: the result for a period is a list of
parts, each a wall-clock start plus sorted offsets from it. Offsets depend only on the
period's shape (a week; a month's length and first weekday: 28 shapes), so they are computed
once per shape, and a period costs one date construction plus one addition per execution.

Period numbers count from the period containing the reference instant R (ISO weeks, Monday
first); the caller keeps only multiples of the interval.
"""

from __future__ import annotations

import calendar
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from itertools import count
from math import gcd

from scheduler_lib.schedule.parse import Recurrence

#: A period's executions as wall-clock readings: [(start of a part, offsets from it)].
#: Readings are datetimes whose fields are the wall clock and whose tzinfo is UTC: in UTC
#: they already are the instants, elsewhere `reading - zone.utcoffset(reading)` resolves one.
#: (Arithmetic on them is cheap; swapping tzinfo per execution is not.)
Parts = list[tuple[datetime, tuple[timedelta, ...]]]

_ONE_DAY = timedelta(days=1)
_ONE_WEEK = timedelta(weeks=1)
_DAY_ONE = datetime(1, 1, 1, tzinfo=UTC)
_HOURS = tuple(timedelta(hours=hour) for hour in range(24))
_MINUTES = tuple(timedelta(minutes=minute) for minute in range(60))
_MONTH_LENGTHS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)

#: The Gregorian calendar repeats, weekdays included, every 400 years (4800 months): a Month
#: or Year schedule that selects no day in a full cycle of its active periods never runs.
_CYCLE = {"Day": 1, "Week": 1, "Month": 4800, "Year": 400}


def day_times(recurrence: Recurrence, reference: datetime) -> tuple[timedelta, ...]:
    """Sorted times of day (as offsets from midnight) of every selected day.

    Seconds always come from R; minutes default to R's minute; hours default to every hour
    when minutes are given (the seed's "run every 15 minutes"), otherwise to R's hour.
    """
    minutes = recurrence.minutes or (reference.minute,)
    if recurrence.hours:
        hours: tuple[int, ...] | range = recurrence.hours
    else:
        hours = range(24) if recurrence.minutes else (reference.hour,)
    second = timedelta(seconds=reference.second, microseconds=reference.microsecond)
    return tuple(sorted(_HOURS[h] + _MINUTES[m] + second for h in hours for m in minutes))


def month_days(
    length: int, first_weekday: int, recurrence: Recurrence, default_day: int
) -> list[int]:
    """Days (1-based) of a month selected by `monthDays` and `monthlyOccurrences` (their union);
    R's day of month when neither is given. A day the month lacks is skipped."""
    selected: set[int] = set()
    wanted = recurrence.month_days
    if wanted is None and recurrence.monthly_occurrences is None:
        wanted = (default_day,)
    for day in wanted or ():
        number = day if day > 0 else length + 1 + day
        if 1 <= number <= length:
            selected.add(number)
    for weekday, occurrence in recurrence.monthly_occurrences or ():
        matching = range(1 + (weekday - first_weekday) % 7, length + 1, 7)
        if occurrence is None:
            selected.update(matching)
            continue
        index = occurrence - 1 if occurrence > 0 else occurrence  # 1 = first, -1 = last
        if -len(matching) <= index < len(matching):
            selected.add(matching[index])
    return sorted(selected)


@dataclass(frozen=True, slots=True)
class PeriodCalendar:
    """Period arithmetic for one schedule: `period_of` seeks; `periods(first, step)` expands
    periods first, first + step, ... in order (advancing incrementally, as rrule does)."""

    period_of: Callable[[date], int]
    periods: Callable[[int, int], Iterator[Parts]]
    #: The most consecutive active periods that can select nothing before the schedule is
    #: known never to run again.
    max_empty_periods: int


def period_calendar(recurrence: Recurrence, reference: datetime) -> PeriodCalendar:
    """The calendar of a Day, Week, Month or Year recurrence whose reference instant R reads
    `reference` (a reading: wall-clock fields, tzinfo UTC) in the evaluation zone."""
    times = day_times(recurrence, reference)
    ref = reference.date()
    frequency = recurrence.frequency
    cycle = _CYCLE[frequency]
    max_empty = cycle // gcd(cycle, recurrence.interval)
    if frequency in ("Day", "Week"):
        if frequency == "Day":
            first, length, offsets = ref.toordinal(), _ONE_DAY, times
        else:
            first, length = ref.toordinal() - ref.weekday(), _ONE_WEEK  # Monday
            week_days = recurrence.week_days or (ref.weekday(),)
            offsets = tuple(_ONE_DAY * day + time for day in week_days for time in times)
        start = _midnight(first)

        def fixed(number: int, step: int) -> Iterator[Parts]:
            reading, stride = start + length * number, length * step
            while True:
                yield [(reading, offsets)]
                reading += stride

        days = length.days
        return PeriodCalendar(lambda d: (d.toordinal() - first) // days, fixed, max_empty)
    month_offsets = _MonthOffsets(recurrence, times, ref.day)
    if frequency == "Month":
        base = ref.year * 12 + ref.month - 1

        def months(number: int, step: int) -> Iterator[Parts]:
            for month_number in count(base + number, step):
                year, month_index = divmod(month_number, 12)
                yield month_offsets.parts(year, (month_index + 1,))

        return PeriodCalendar(lambda d: d.year * 12 + d.month - 1 - base, months, max_empty)
    selected = recurrence.months or (ref.month,)

    def years(number: int, step: int) -> Iterator[Parts]:
        for year in count(ref.year + number, step):
            yield month_offsets.parts(year, selected)

    return PeriodCalendar(lambda d: d.year - ref.year, years, max_empty)


class _MonthOffsets:
    """Offsets from the 1st of a month at 00:00, cached per month shape."""

    __slots__ = ("_cache", "_default_day", "_recurrence", "_times")

    def __init__(self, recurrence: Recurrence, times: tuple[timedelta, ...], default_day: int):
        self._recurrence = recurrence
        self._times = times
        self._default_day = default_day
        self._cache: dict[tuple[int, int], tuple[timedelta, ...]] = {}

    def parts(self, year: int, months: tuple[int, ...]) -> Parts:
        """Parts of the given months (1-based) of `year`; a month that selects no day has none."""
        result: Parts = []
        for month in months:
            first = date(year, month, 1).toordinal()
            length = _MONTH_LENGTHS[month]
            if month == 2 and calendar.isleap(year):
                length = 29
            shape = (length, (first + 6) % 7)  # ordinal 1 (0001-01-01) was a Monday
            offsets = self._cache.get(shape)
            if offsets is None:
                offsets = self._cache[shape] = self._offsets(*shape)
            if offsets:
                result.append((_midnight(first), offsets))
        return result

    def _offsets(self, length: int, first_weekday: int) -> tuple[timedelta, ...]:
        days = month_days(length, first_weekday, self._recurrence, self._default_day)
        return tuple(_ONE_DAY * (day - 1) + time for day in days for time in self._times)


def _midnight(ordinal: int) -> datetime:
    """The reading 00:00 of the day with this proleptic Gregorian ordinal."""
    return _DAY_ONE + _ONE_DAY * (ordinal - 1)
