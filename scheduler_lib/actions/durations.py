"""Service Bus `timeToLive` values: ISO 8601 durations or .NET TimeSpan strings.

The 2016 API documents `timeToLive` as a duration, but jobs created through the .NET SDK
carried `TimeSpan.ToString()` values such as `1.02:03:04.5000000`, and Azure Scheduler
accepted both. Pure and SDK-free, so the model's validation can use it too.
"""

from __future__ import annotations

import re
from datetime import timedelta

import isodate

from scheduler_lib.errors import ValidationError

TTL_FIELD = "brokeredMessageProperties.timeToLive"

# [d.]hh:mm[:ss[.fffffff]], or a bare number of days, as TimeSpan.Parse reads them.
_TIMESPAN = re.compile(
    r"^(?:(?P<days>\d+)\.)?(?P<hours>\d{1,2}):(?P<minutes>\d{1,2})"
    r"(?::(?P<seconds>\d{1,2})(?:\.(?P<fraction>\d{1,7}))?)?$"
)


def parse_time_to_live(value: str, *, field: str = TTL_FIELD) -> timedelta:
    """A positive timedelta from an ISO 8601 duration (`PT10M`) or a TimeSpan (`00:10:00`)."""
    text = value.strip()
    if text.isdigit():
        result = timedelta(days=int(text))
    elif match := _TIMESPAN.match(text):
        parts = match.groupdict()
        hours, minutes = int(parts["hours"]), int(parts["minutes"])
        seconds = int(parts["seconds"] or 0)
        if hours > 23 or minutes > 59 or seconds > 59:
            raise ValidationError(field, f"{value!r} is not a valid TimeSpan")
        result = timedelta(
            days=int(parts["days"] or 0),
            hours=hours,
            minutes=minutes,
            seconds=seconds,
            microseconds=int((parts["fraction"] or "0").ljust(7, "0")) // 10,
        )
    else:
        try:
            parsed = isodate.parse_duration(text)
        except (isodate.ISO8601Error, ValueError):
            raise ValidationError(
                field, f"{value!r} is neither an ISO 8601 duration nor a TimeSpan"
            ) from None
        if not isinstance(parsed, timedelta):
            raise ValidationError(field, "use days, hours, minutes or seconds, not years or months")
        result = parsed
    if result <= timedelta(0):
        raise ValidationError(field, "must be positive")
    return result
