"""The recurrence engine: when a job runs, per docs/schedule.md.

`parse_schedule` validates a job's timing and returns an immutable `Schedule`, which answers
two questions without ever replaying a job's history:

- `first()`: the first execution, relative to the creation instant (the startTime table);
- `next_after(t)`: the first scheduled time strictly after any instant t.

Both seek arithmetically to the period containing the instant (periods are counted from the
period containing the reference instant R), so their cost does not depend on how long ago
the job started. `occurrences(job, now=...)` lists the executions lazily, honouring `count`.

Minute and Hour step on elapsed time; Day and coarser are computed in wall-clock time of the
evaluation zone (see `recurrence_calendar`) and then resolved to instants (see `timezones`).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from itertools import islice
from operator import lt
from typing import Any, Protocol, cast

from scheduler_lib.errors import ValidationError
from scheduler_lib.schedule.calendar import Parts, PeriodCalendar, period_calendar
from scheduler_lib.schedule.parse import JobTiming, Recurrence, parse_job_timing, whole_second
from scheduler_lib.schedule.timezones import EvaluationZone

__all__ = ["Schedule", "occurrences", "parse_schedule"]

_ONE_DAY = timedelta(days=1)
#: More than any zone has ever moved its clocks forward at once (Samoa skipped a day, 2011).
_LONGEST_GAP = timedelta(days=2)


class _Steps(Protocol):
    def after(self, threshold: datetime, inclusive: bool) -> Iterator[datetime]:
        """Scheduled times at or after R and after `threshold` (or at it, if `inclusive`),
        ascending and without repeats."""
        ...


@dataclass(frozen=True)
class Schedule:
    """A validated job timing, ready to answer when the job runs."""

    reference: datetime
    count: int | None
    end_time: datetime | None
    time_zone: str
    _first: datetime | None = field(repr=False)
    _steps: _Steps | None = field(repr=False, compare=False)

    @property
    def recurs(self) -> bool:
        """Whether the job has a recurrence (without one it runs once)."""
        return self._steps is not None

    def first(self) -> datetime | None:
        """The first execution (see the startTime table); None when nothing is left."""
        return self._first

    def next_after(self, instant: datetime) -> datetime | None:
        """The first execution time strictly after `instant`, honouring endTime but not
        count (callers count executions themselves); None when there is none."""
        _require_aware(instant, "instant")
        first = self._first
        if first is None:
            return None
        if instant < first:
            return first
        if self._steps is None:
            return None
        later = next(self._steps.after(instant, False), None)
        return later if later is not None and self._within_end(later) else None

    def executions(self) -> Iterator[datetime]:
        """Every execution, ascending and lazily: first(), then the scheduled times after it,
        stopping after `count` executions (at least 1) or at `endTime`."""
        if self._first is None:
            return iter(())
        return islice(self.executions_from(self._first), self.count)

    def executions_from(self, instant: datetime) -> Iterator[datetime]:
        """Executions at or after `instant`, ascending and lazily, honouring endTime but not
        count: `next_after` in one walk, for callers that want many (a timeline)."""
        _require_aware(instant, "instant")
        first = self._first
        if first is None:
            return
        if instant <= first:
            yield first
        if self._steps is None:
            return
        for later in self._steps.after(max(instant, first), instant > first):
            if not self._within_end(later):
                return
            yield later

    def _within_end(self, instant: datetime) -> bool:
        return self.end_time is None or instant <= self.end_time


def parse_schedule(
    job: Mapping[str, Any], *, now: datetime, timing: JobTiming | None = None
) -> Schedule:
    """Validate a job's `startTime`/`recurrence` (ValidationError naming the field) and build
    its schedule; `now` is the job's creation instant. `timing`: the job's timing as the
    caller has already parsed it (`parse_job_timing`), so it is not parsed twice."""
    _require_aware(now, "now")
    now = whole_second(now.astimezone(UTC))
    if timing is None:
        timing = parse_job_timing(job)
    start, recurrence, zone = timing.start_time, timing.recurrence, timing.zone
    if start is not None:
        start = whole_second(start)
    reference = start or now
    if recurrence is None:
        once = now if start is None else max(start, now)
        return Schedule(reference, None, None, zone.name, once, None)
    try:
        steps = _steps(recurrence, reference, zone)
    except (OverflowError, ValueError):
        raise ValidationError("startTime", "is too close to the ends of the calendar") from None
    if start is None:
        first: datetime | None = now  # run now, then the schedule's times after now
    else:
        first = next(steps.after(max(start, now), True), None)
    end = recurrence.end_time
    if first is not None and end is not None and first > end:
        first = None
    return Schedule(reference, recurrence.count, end, zone.name, first, steps)


def occurrences(job: Mapping[str, Any], *, now: datetime) -> Iterator[datetime]:
    """The job's executions as aware UTC datetimes, ascending, lazily. Validation happens
    here, before the first item is asked for."""
    return parse_schedule(job, now=now).executions()


def _require_aware(value: datetime, name: str) -> None:
    if not isinstance(value, datetime) or value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be an aware datetime, got {value!r}")


def _steps(recurrence: Recurrence, reference: datetime, zone: EvaluationZone) -> _Steps:
    wall = zone.reading(reference)
    if recurrence.frequency == "Minute":
        return _ElapsedSteps(reference, timedelta(minutes=1), recurrence.interval, (timedelta(),))
    if recurrence.frequency == "Hour":
        # The hour containing R starts at R's wall-clock hour; minutes are offsets into it.
        second = timedelta(seconds=wall.second, microseconds=wall.microsecond)
        hour_start = reference - timedelta(minutes=wall.minute) - second
        minutes = recurrence.minutes or (wall.minute,)
        offsets = tuple(timedelta(minutes=minute) + second for minute in minutes)
        hour = timedelta(hours=1)
        return _ElapsedSteps(hour_start, hour, recurrence.interval, offsets, reference)
    return _CalendarSteps(period_calendar(recurrence, wall), zone, recurrence.interval, reference)


class _ElapsedSteps:
    """Minute and Hour: periods are fixed lengths of elapsed time from `origin`."""

    __slots__ = ("_interval", "_offsets", "_origin", "_period", "_reference")

    def __init__(
        self,
        origin: datetime,
        period: timedelta,
        interval: int,
        offsets: tuple[timedelta, ...],
        reference: datetime | None = None,
    ) -> None:
        self._origin = origin
        self._period = period
        self._interval = interval
        self._offsets = offsets
        self._reference = origin if reference is None else reference

    def after(self, threshold: datetime, inclusive: bool) -> Iterator[datetime]:
        if threshold < self._reference:
            threshold, inclusive = self._reference, True
        number = (threshold - self._origin) // self._period
        number += -number % self._interval  # up to the next active period
        step, offsets = self._period * self._interval, self._offsets
        try:
            start = self._origin + self._period * number
            yield from _beyond([start + offset for offset in offsets], threshold, inclusive)
            while True:
                start += step
                for offset in offsets:
                    yield start + offset
        except OverflowError:  # past the end of the calendar (year 9999)
            return


class _CalendarSteps:
    """Day, Week, Month, Year: wall-clock periods resolved to instants in the zone."""

    __slots__ = ("_calendar", "_interval", "_reference", "_zone")

    def __init__(
        self, calendar: PeriodCalendar, zone: EvaluationZone, interval: int, reference: datetime
    ) -> None:
        self._calendar = calendar
        self._zone = zone
        self._interval = interval
        self._reference = reference

    def after(self, threshold: datetime, inclusive: bool) -> Iterator[datetime]:
        if threshold < self._reference:
            threshold, inclusive = self._reference, True
        zone, calendar, interval = self._zone, self._calendar, self._interval
        try:
            day = zone.reading(threshold).date()
        except OverflowError:  # an instant that reads past year 9999 in this zone
            return iter(())
        # A reading in a spring-forward gap runs after the gap, possibly on the next day:
        # outside UTC, start a day early so that such a shifted execution is not missed.
        if not zone.is_utc and day > date.min:
            day -= _ONE_DAY
        number = max(calendar.period_of(day), 0)
        number += -number % interval  # up to the next active period
        periods = _selecting(calendar.periods(number, interval), calendar.max_empty_periods)
        if zone.is_utc:
            return _utc_instants(periods, threshold, inclusive)
        return _zoned_instants(periods, zone, threshold, inclusive)


def _beyond(instants: list[datetime], threshold: datetime, inclusive: bool) -> list[datetime]:
    """Those of the ascending `instants` after `threshold` (or at it, if `inclusive`)."""
    first = instants[0]
    if first > threshold or (inclusive and first == threshold):
        return instants  # the usual case: the whole period lies beyond
    return [t for t in instants if t > threshold or (inclusive and t == threshold)]


def _selecting(periods: Iterator[Parts], max_empty: int) -> Iterator[Parts]:
    """The periods that select something; stops at the end of the calendar (year 9999) or
    once `max_empty` periods in a row select nothing (then nothing ever will)."""
    empty = 0
    try:
        for parts in periods:
            if parts:
                empty = 0
                yield parts
            else:
                empty += 1
                if empty > max_empty:
                    return
    except (OverflowError, ValueError):
        return


def _utc_instants(
    periods: Iterator[Parts], threshold: datetime, inclusive: bool
) -> Iterator[datetime]:
    """In UTC a reading is its instant, and periods never overlap: yield as computed."""
    try:
        for parts in periods:
            instants = [start + offset for start, offsets in parts for offset in offsets]
            yield from _beyond(instants, threshold, inclusive)
    except OverflowError:  # the last period runs past year 9999
        return


def _zoned_instants(
    periods: Iterator[Parts], zone: EvaluationZone, threshold: datetime, inclusive: bool
) -> Iterator[datetime]:
    """Resolve each reading (inlined `EvaluationZone.resolve`: this is the hot loop). A
    period's executions are held back until the next period's earliest possible instant is
    known, since readings pushed past a gap can follow that period's first execution."""
    # A tz database zone always has an offset; the cast keeps the hot loop free of checks.
    utcoffset = cast(Callable[[datetime], timedelta], zone.tzinfo.utcoffset)
    pending: list[datetime] = []
    try:
        for parts in periods:
            readings = [start + offset for start, offsets in parts for offset in offsets]
            instants = [reading - utcoffset(reading) for reading in readings]
            if not all(map(lt, instants, instants[1:])):
                instants = sorted(set(instants))  # a gap reordered them or made two one
            instants = _beyond(instants, threshold, inclusive)
            start = parts[0][0]
            lowest = start - utcoffset(start) - _LONGEST_GAP  # cheap, and usually enough
            if pending and pending[-1] >= lowest:
                lowest = zone.earliest_instant_from(start)
            if not pending or pending[-1] < lowest:
                yield from pending
                pending = instants
            else:
                cut = bisect_left(pending, lowest)
                yield from pending[:cut]
                pending = sorted({*pending[cut:], *instants})
    except OverflowError:
        pass
    yield from pending
