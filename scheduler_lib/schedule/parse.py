"""Validation of a job's timing JSON (`startTime`, `recurrence`) into plain typed values.

Every rule of the "Validation" section of the schedule semantics is checked here, and each
failure names the JSON path of the offending value, so that the API can answer 400 with a
message a user can act on. Nothing is silently ignored: unknown keys in `recurrence`,
`schedule` or a monthly occurrence are errors. JSON `null` means "not given".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, TypedDict

from scheduler_lib.errors import ValidationError, did_you_mean
from scheduler_lib.schedule.timezones import UTC, UTC_ZONE, EvaluationZone, resolve_zone

FREQUENCIES = ("Minute", "Hour", "Day", "Week", "Month", "Year")
MAX_INTERVAL = {"Minute": 1000, "Hour": 1000, "Day": 548, "Week": 78, "Month": 18, "Year": 100}
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_WEEKDAY_INDEX = {name.casefold(): index for index, name in enumerate(WEEKDAYS)}
_FREQUENCY_INDEX = {name.casefold(): name for name in FREQUENCIES}

#: The most executions `count` may ask for: the 2016-03-01 API's int32 (what the .NET SDK's
#: `JobRecurrence.Count` holds), far beyond any job's life (every minute: 4000 years).
MAX_COUNT = 2**31 - 1
_RECURRENCE_KEYS = ("frequency", "interval", "schedule", "count", "endTime", "timeZone")
#: Schedule fields and the frequencies that may use them.
_SCHEDULE_KEYS: dict[str, tuple[str, ...]] = {
    "minutes": ("Hour", "Day", "Week", "Month", "Year"),
    "hours": ("Day", "Week", "Month", "Year"),
    "weekDays": ("Week",),
    "monthDays": ("Month", "Year"),
    "monthlyOccurrences": ("Month", "Year"),
    "months": ("Year",),
}
_OCCURRENCE_KEYS = ("day", "occurrence", "Occurrence")
#: Integer-list schedule fields: (Recurrence attribute, low, high); a negative low means
#: "counted from the end", which excludes 0.
IntegerField = Literal["minutes", "hours", "month_days", "months"]
_INTEGER_FIELDS: dict[str, tuple[IntegerField, int, int]] = {
    "minutes": ("minutes", 0, 59),
    "hours": ("hours", 0, 23),
    "monthDays": ("month_days", -31, 31),
    "months": ("months", 1, 12),
}


class ScheduleFields(TypedDict, total=False):
    """A schedule's fields, as `Recurrence` takes them."""

    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    week_days: tuple[int, ...]
    month_days: tuple[int, ...]
    monthly_occurrences: tuple[tuple[int, int | None], ...]
    months: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Recurrence:
    """A validated `recurrence`. Schedule fields are sorted, de-duplicated tuples, or None
    when not given (their defaults come from the reference instant, see `recurrence`)."""

    frequency: str
    interval: int
    minutes: tuple[int, ...] | None = None
    hours: tuple[int, ...] | None = None
    week_days: tuple[int, ...] | None = None  # Monday = 0
    month_days: tuple[int, ...] | None = None
    monthly_occurrences: tuple[tuple[int, int | None], ...] | None = None  # (weekday, n)
    months: tuple[int, ...] | None = None
    count: int | None = None
    end_time: datetime | None = None


@dataclass(frozen=True, slots=True)
class JobTiming:
    """A job's validated timing: when it starts, how it recurs, which zone it is read in."""

    start_time: datetime | None
    recurrence: Recurrence | None
    zone: EvaluationZone


def parse_job_timing(job: Mapping[str, Any]) -> JobTiming:
    """Validate `job["startTime"]` and `job["recurrence"]`; other keys are not ours."""
    if not isinstance(job, Mapping):
        raise ValidationError("properties", "must be a JSON object")
    raw = job.get("recurrence")
    if raw is not None and not isinstance(raw, Mapping):
        raise ValidationError("recurrence", "must be a JSON object")
    if raw is not None:
        _reject_unknown(raw, _RECURRENCE_KEYS, "recurrence")
    zone = _parse_zone(raw.get("timeZone") if raw is not None else None)
    start = parse_date_time(job.get("startTime"), "startTime", zone)
    recurrence = None if raw is None else _parse_recurrence(raw, zone)
    return JobTiming(start, recurrence, zone)


def parse_date_time(value: Any, field: str, zone: EvaluationZone) -> datetime | None:
    """An ISO 8601 date-time (or date: 00:00) as an aware UTC instant; a reading without an
    offset is wall-clock time in `zone`. Also takes a `datetime`, read the same way."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            raise ValidationError(
                field, f"{value!r} is not an ISO 8601 date-time (e.g. 2026-03-04T09:00:00Z)"
            ) from None
    elif not isinstance(value, datetime):
        raise ValidationError(field, "must be an ISO 8601 date-time string")
    try:
        aware = value.tzinfo is not None and value.utcoffset() is not None
        return value.astimezone(UTC) if aware else zone.instant(value.replace(tzinfo=None))
    except (OverflowError, ValueError):
        raise ValidationError(field, f"{value.isoformat()} is out of range") from None


def whole_second(instant: datetime) -> datetime:
    """`instant` rounded up to a whole second. Every execution derives from `now` or
    startTime (R), so rounding these two here puts every occurrence on a whole second; up,
    not to the nearest, because a job "runs once at once" must never run before it exists
    (year 9999's last second is kept as it is: nothing runs after it anyway)."""
    if not instant.microsecond:
        return instant
    try:
        return instant.replace(microsecond=0) + timedelta(seconds=1)
    except OverflowError:
        return instant


def _parse_zone(value: Any) -> EvaluationZone:
    if value is None:
        return UTC_ZONE
    if not isinstance(value, str):
        raise ValidationError("recurrence.timeZone", "must be a time zone name string")
    try:
        return resolve_zone(value)
    except LookupError:
        raise ValidationError(
            "recurrence.timeZone",
            f"unknown time zone {value!r}: use an IANA name (Europe/London) "
            "or a Windows name (GMT Standard Time)",
        ) from None


def _parse_recurrence(raw: Mapping[str, Any], zone: EvaluationZone) -> Recurrence:
    frequency = _parse_frequency(raw.get("frequency"))
    interval = raw.get("interval")
    if interval is None:
        interval = 1
    interval = _integer(
        interval, "recurrence.interval", 1, MAX_INTERVAL[frequency], f" for frequency {frequency}"
    )
    count = raw.get("count")
    if count is not None:
        count = _integer(count, "recurrence.count", 1, MAX_COUNT, " (the API's int32)")
    end_time = parse_date_time(raw.get("endTime"), "recurrence.endTime", zone)
    fields = _parse_schedule(raw.get("schedule"), frequency)
    return Recurrence(frequency, interval, count=count, end_time=end_time, **fields)


def _parse_frequency(value: Any) -> str:
    if value is None:
        raise ValidationError("recurrence.frequency", "is required when recurrence is given")
    name = _FREQUENCY_INDEX.get(value.casefold()) if isinstance(value, str) else None
    if name is None:
        hint = did_you_mean(value, FREQUENCIES) if isinstance(value, str) else ""
        raise ValidationError(
            "recurrence.frequency", f"{value!r} is not one of {', '.join(FREQUENCIES)}{hint}"
        )
    return name


def _parse_schedule(raw: Any, frequency: str) -> ScheduleFields:
    """The schedule's fields as `Recurrence` keyword arguments."""
    path = "recurrence.schedule"
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ValidationError(path, "must be a JSON object")
    _reject_unknown(raw, tuple(_SCHEDULE_KEYS), path)
    given = {key: value for key, value in raw.items() if value is not None}
    if given and frequency == "Minute":
        raise ValidationError(path, "frequency Minute takes no schedule")
    for key in given:
        if frequency not in _SCHEDULE_KEYS[key]:
            allowed = " or ".join(_SCHEDULE_KEYS[key])
            raise ValidationError(
                f"{path}.{key}", f"is only allowed with frequency {allowed}, not {frequency}"
            )
    fields: ScheduleFields = {}
    for key, (name, low, high) in _INTEGER_FIELDS.items():
        if key in given:
            items = _items(given[key], f"{path}.{key}")
            values = {_integer_item(value, item_path, low, high) for item_path, value in items}
            fields[name] = tuple(sorted(values))
    if "weekDays" in given:
        fields["week_days"] = _parse_week_days(given["weekDays"], f"{path}.weekDays")
    if "monthlyOccurrences" in given:
        items = _items(given["monthlyOccurrences"], f"{path}.monthlyOccurrences")
        fields["monthly_occurrences"] = tuple(
            _parse_occurrence(value, item_path) for item_path, value in items
        )
    return fields


def _parse_week_days(raw: Any, path: str) -> tuple[int, ...]:
    items = _items(raw, path)
    if len(items) > 7:
        raise ValidationError(path, f"lists {len(items)} days; at most 7 are allowed")
    days = [_weekday(value, item_path) for item_path, value in items]
    if len(set(days)) != len(days):
        repeated = next(WEEKDAYS[day] for day in days if days.count(day) > 1)
        raise ValidationError(path, f"lists {repeated} more than once")
    return tuple(sorted(days))


def _parse_occurrence(raw: Any, path: str) -> tuple[int, int | None]:
    if not isinstance(raw, Mapping):
        raise ValidationError(path, 'must be an object like {"day": "Friday", "occurrence": -1}')
    _reject_unknown(raw, _OCCURRENCE_KEYS, path)
    if raw.get("day") is None:
        raise ValidationError(f"{path}.day", "is required")
    day = _weekday(raw["day"], f"{path}.day")
    given = [key for key in ("occurrence", "Occurrence") if raw.get(key) is not None]
    if len(given) > 1:
        raise ValidationError(f"{path}.occurrence", "is given twice (occurrence and Occurrence)")
    if not given:
        return day, None
    key = given[0]
    return day, _integer_item(raw[key], f"{path}.{key}", -5, 5)


def _items(raw: Any, path: str) -> list[tuple[str, Any]]:
    """(path, value) of each element; a scalar is a one-element list named by `path` itself."""
    if not isinstance(raw, list | tuple):
        return [(path, raw)]
    if not raw:
        raise ValidationError(path, "must list at least one value")
    return [(f"{path}[{index}]", value) for index, value in enumerate(raw)]


def _integer(value: Any, path: str, low: int, high: int | None, why: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValidationError(path, f"must be an integer, not {value!r}")
    if value < low or (high is not None and value > high):
        bounds = f"at least {low}" if high is None else f"between {low} and {high}"
        raise ValidationError(path, f"must be {bounds}{why}, not {value}")
    return value


def _integer_item(value: Any, path: str, low: int, high: int) -> int:
    """An integer in low..high; with a negative `low`, in low..-1 or 1..high."""
    number = _integer(value, path, low, high, "")
    if number == 0 and low < 0:
        raise ValidationError(path, f"must be 1..{high} or {low}..-1, not 0")
    return number


def _weekday(value: Any, path: str) -> int:
    index = _WEEKDAY_INDEX.get(value.casefold()) if isinstance(value, str) else None
    if index is None:
        raise ValidationError(path, f"{value!r} is not a day name ({', '.join(WEEKDAYS)})")
    return index


def _reject_unknown(raw: Mapping[str, Any], known: tuple[str, ...], path: str) -> None:
    for key in raw:
        if key not in known:
            raise ValidationError(
                f"{path}.{key}", f"is not a known field; expected one of {', '.join(known)}"
            )
