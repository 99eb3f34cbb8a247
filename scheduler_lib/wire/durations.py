"""Durations on the wire: the one .NET TimeSpan reader, and Service Bus `timeToLive` values;
the one ISO 8601 duration reader (`read_iso_duration`) is `timeutil`'s, below the domain,
which reads a stored definition's durations with it.

`read_iso_duration` is liberal where the meaning is unambiguous: lower-case designators
(`pt30s`) and a day count written in the time part (`PT1D`, which the Azure Scheduler
documentation's own retryPolicy example uses) read as `P1D`; a value too large for any
date (`PT99999999999999999999S`) is a ValidationError naming the field, not a crash. A
negative one (`-PT1S`) is refused here, so every duration field of a job refuses it the
same way (a field where zero means nothing sets its own lower bound, `readers.duration`'s
`low`). What is stored and returned is canonical (`isodate.duration_isoformat`, e.g. `P1D`).

`read_timespan` reads `TimeSpan.ToString()` texts (`00:01:00`, `1.02:03:04.5000000`): the
.NET SDK 2.x sends every duration so (its retryInterval, timeToLive), and Azure Scheduler
accepted them wherever it read a duration (`readers.duration` takes both forms). The 2016
API documents `timeToLive` as a duration too, and jobs created through the .NET SDK carried
TimeSpan values there as well. Pure and SDK-free, so the model's validation can use it.
"""

from __future__ import annotations

import re
from datetime import timedelta

from scheduler_lib.errors import ValidationError
from scheduler_lib.timeutil import read_iso_duration

TTL_FIELD = "brokeredMessageProperties.timeToLive"

# [d.]hh:mm[:ss[.fffffff]], or a bare number of days, as TimeSpan.Parse reads them.
_TIMESPAN = re.compile(
    r"^(?:(?P<days>\d+)\.)?(?P<hours>\d{1,2}):(?P<minutes>\d{1,2})"
    r"(?::(?P<seconds>\d{1,2})(?:\.(?P<fraction>\d{1,7}))?)?$"
)


def read_timespan(text: str, field: str) -> timedelta | None:
    """A .NET `TimeSpan` text (`[d.]hh:mm[:ss[.fffffff]]`, what `TimeSpan.ToString()` writes
    and the .NET SDK 2.x sends for every duration), or None when `text` is not of that form.
    No sign is read: `-00:01:00` is not of the form (so a caller refuses it as neither)."""
    match = _TIMESPAN.match(text.strip())
    if match is None:
        return None
    parts = match.groupdict()
    hours, minutes = int(parts["hours"]), int(parts["minutes"])
    seconds = int(parts["seconds"] or 0)
    if hours > 23 or minutes > 59 or seconds > 59:
        raise ValidationError(field, "is not a valid TimeSpan (hours 0-23, minutes 0-59)")
    try:
        return timedelta(
            days=int(parts["days"] or 0),
            hours=hours,
            minutes=minutes,
            seconds=seconds,
            microseconds=int((parts["fraction"] or "0").ljust(7, "0")) // 10,
        )
    except OverflowError:
        raise ValidationError(field, "is too long a duration") from None


def parse_time_to_live(value: str, *, field: str = TTL_FIELD) -> timedelta:
    """A positive timedelta from an ISO 8601 duration (`PT10M`) or a TimeSpan (`00:10:00`)."""
    text = value.strip()
    if text.isdigit():
        if len(text) > 9:  # timedelta's limit, 999999999 days
            raise ValidationError(field, "is too long a duration")
        result = timedelta(days=int(text))
    elif (span := read_timespan(text, field)) is not None:
        result = span
    else:
        if not text.upper().lstrip("+-").startswith("P"):
            raise ValidationError(field, "is neither an ISO 8601 duration nor a TimeSpan")
        parsed = read_iso_duration(text, field)
        if not isinstance(parsed, timedelta):
            raise ValidationError(field, "use days, hours, minutes or seconds, not years or months")
        result = parsed
    if result <= timedelta(0):
        raise ValidationError(field, "must be positive")
    return result
