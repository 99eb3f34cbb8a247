"""The template date functions: `dateTimeAdd`, `dateTimeToEpoch`, `dateTimeFromEpoch`, and
the .NET date format strings `utcNow(format)` and `dateTimeAdd(..., format)` take.

`dateTimeAdd` counts a year as 365 days and a month as 30, as ARM documents; without a
format its result is ISO 8601 (`2024-01-01T00:00:00Z`). Format strings follow .NET's
invariant culture: the standard `o`, `s` and `u`, and custom patterns (`yyyyMMddTHHmmssZ`,
`yyyy-MM-dd`, ...). A culture-dependent standard format (`d`, `g`, ...) is refused rather
than rendered in some culture the template's author did not choose.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from scheduler_lib.migrate.functions import FUNCTIONS, ArgumentError, int_arg, str_arg

_DURATION = re.compile(
    r"^(?P<sign>[-+])?P(?:(?P<Y>\d+)Y)?(?:(?P<M>\d+)M)?(?:(?P<W>\d+)W)?(?:(?P<D>\d+)D)?"
    r"(?:T(?:(?P<h>\d+)H)?(?:(?P<m>\d+)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?$",
    re.IGNORECASE,
)
_STANDARD = {
    "o": "yyyy'-'MM'-'dd'T'HH':'mm':'ss'.'fffffffK",
    "s": "yyyy'-'MM'-'dd'T'HH':'mm':'ss",
    "u": "yyyy'-'MM'-'dd HH':'mm':'ss'Z'",
}
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")  # fmt: skip
_SPECIFIER = re.compile(r"(y+|M+|d+|H+|h+|m+|s+|f+|F+|t+|K|z+|'[^']*'|\"[^\"]*\"|\\.|.)")


def parse_instant(function: str, value: Any) -> datetime:
    """An ISO 8601 date-time (space or `T`, `Z` or an offset; naive means UTC)."""
    text = str_arg(function, value).strip()
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise ArgumentError(function, f"{text!r} is not an ISO 8601 date-time") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def duration(function: str, value: Any) -> timedelta:
    """An ISO 8601 duration, a year being 365 days and a month 30 (ARM's rule)."""
    match = _DURATION.match(str_arg(function, value).strip())
    if match is None or match.group(0).upper() in ("P", "-P", "+P", "PT"):
        raise ArgumentError(function, f"{value!r} is not an ISO 8601 duration")
    part = {k: float(v) for k, v in match.groupdict().items() if v and k != "sign"}
    days = part.get("Y", 0) * 365 + part.get("M", 0) * 30 + part.get("W", 0) * 7 + part.get("D", 0)
    delta = timedelta(
        days=days, hours=part.get("h", 0), minutes=part.get("m", 0), seconds=part.get("s", 0)
    )
    return -delta if match.group("sign") == "-" else delta


def iso(instant: datetime) -> str:
    """The default rendering: ISO 8601, `Z` for UTC, fractions only when there are any."""
    text = instant.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def render(function: str, instant: datetime, pattern: str) -> str:
    """`instant` in a .NET date format string (invariant culture)."""
    if len(pattern) == 1:
        if pattern not in _STANDARD:
            raise ArgumentError(function, f"the standard format {pattern!r} depends on a culture")
        pattern = _STANDARD[pattern]
        if "Z'" in pattern:
            instant = instant.astimezone(UTC)
    return "".join(_piece(function, token, instant) for token in _SPECIFIER.findall(pattern))


def _piece(function: str, token: str, t: datetime) -> str:
    head, size = token[0], len(token)
    if head == "y":
        return f"{t.year % 100:0{size}d}" if size <= 2 else f"{t.year:0{size}d}"
    hour12 = (t.hour - 1) % 12 + 1
    forms = {
        "M": (f"{t.month}", f"{t.month:02d}", _MONTHS[t.month - 1][:3], _MONTHS[t.month - 1]),
        "d": (f"{t.day}", f"{t.day:02d}", _DAYS[t.weekday()][:3], _DAYS[t.weekday()]),
        "H": (f"{t.hour}", f"{t.hour:02d}"),
        "h": (f"{hour12}", f"{hour12:02d}"),
        "m": (f"{t.minute}", f"{t.minute:02d}"),
        "s": (f"{t.second}", f"{t.second:02d}"),
        "t": ("AP"[t.hour >= 12], "AM" if t.hour < 12 else "PM"),
    }
    if head in forms:
        return forms[head][min(size, len(forms[head])) - 1]
    if head in "fF":
        digits = f"{t.microsecond:06d}0"[:size]
        return digits.rstrip("0") if head == "F" else digits
    if head in "Kz":
        return _offset(t, head, size)
    if head in "'\"":
        return token[1:-1]
    if head == "\\":
        return token[1:]
    return token


def _offset(t: datetime, head: str, size: int) -> str:
    offset = t.utcoffset() or timedelta(0)
    if head == "K" and offset == timedelta(0):
        return "Z"
    sign = "+" if offset >= timedelta(0) else "-"
    minutes = abs(int(offset.total_seconds())) // 60
    hours = f"{sign}{minutes // 60:02d}" if size > 1 or head == "K" else f"{sign}{minutes // 60}"
    return hours + (f":{minutes % 60:02d}" if head == "K" or size >= 3 else "")


def _date_time_add(base: Any, amount: Any, pattern: Any = None) -> str:
    result = parse_instant("dateTimeAdd", base) + duration("dateTimeAdd", amount)
    if pattern is None:
        return iso(result)
    return render("dateTimeAdd", result, str_arg("dateTimeAdd", pattern))


def _to_epoch(value: Any) -> int:
    return int(parse_instant("dateTimeToEpoch", value).timestamp())


def _from_epoch(value: Any) -> str:
    return iso(datetime.fromtimestamp(int_arg("dateTimeFromEpoch", value), UTC))


FUNCTIONS.update({
    "datetimeadd": _date_time_add,
    "datetimetoepoch": _to_epoch,
    "datetimefromepoch": _from_epoch,
})  # fmt: skip
