"""Strict readers for wire JSON: each names the JSON path of what is wrong.

The API accepts what the Azure Scheduler accepted (any-case enums, a few alternative key
spellings) but never silently drops anything: an unknown property, a wrong type or an
impossible value is a `ValidationError(path, message)`, which the API turns into a 400 that
names the field. Messages never quote the offending value, so a secret sent in the wrong
place cannot end up in an error body or a log.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import isodate

from scheduler_lib.errors import ValidationError, did_you_mean
from scheduler_lib.wire.durations import read_iso_duration, read_timespan
from scheduler_lib.wire.shapes import JSONObject


def join(path: str, key: str | int) -> str:
    """`path.key`, or `path[i]` for a list index; `key` alone at the root."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def obj(value: Any, path: str) -> JSONObject:
    """A JSON object, or a ValidationError."""
    if not isinstance(value, dict):
        raise ValidationError(path or "body", "must be a JSON object")
    return value


def present(value: Any, path: str, allowed: Iterable[str]) -> Iterator[tuple[str, Any, str]]:
    """The given (non-null) properties of an object (`keys`): canonical key, value, JSON path.
    A null is how a client leaves a property out, so normalizers skip it."""
    for key, item in keys(value, path, allowed).items():
        if item is not None:
            yield key, item, join(path, key)


def keys(
    value: Any, path: str, allowed: Iterable[str], *, aliases: Mapping[str, str] | None = None
) -> JSONObject:
    """The object with its keys mapped to their canonical spelling.

    Keys match `allowed` case-insensitively (the SDK and hand-written JSON differ, e.g.
    `Occurrence`/`occurrence`); `aliases` maps other accepted spellings (lower-cased) to
    canonical names. Unknown keys, and a key given twice in two spellings, are errors.
    """
    source = obj(value, path)
    canonical = {name.lower(): name for name in allowed}
    for alias, target in (aliases or {}).items():
        canonical[alias.lower()] = target
    result: JSONObject = {}
    for key, item in source.items():
        name = canonical.get(key.lower())
        if name is None:
            hint = did_you_mean(key, allowed)
            raise ValidationError(join(path, key), "is not a known property" + hint)
        if name in result:
            raise ValidationError(join(path, key), f"is given twice (as {name!r} too)")
        result[name] = item
    return result


def string(value: Any, path: str, *, max_length: int = 4096, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise ValidationError(path, "must be a string")
    if not empty and not value:
        raise ValidationError(path, "must not be empty")
    if len(value) > max_length:
        raise ValidationError(path, f"must be at most {max_length} characters")
    return value


def integer(value: Any, path: str, *, low: int | None = None, high: int | None = None) -> int:
    # bool is an int subclass in Python, but `true` is not a number in JSON.
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(path, "must be an integer")
    if low is not None and value < low:
        raise ValidationError(path, f"must be at least {low}")
    if high is not None and value > high:
        raise ValidationError(path, f"must be at most {high}")
    return value


def boolean(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise ValidationError(path, "must be true or false")
    return value


def enum(value: Any, path: str, choices: Iterable[str]) -> str:
    """The canonical (PascalCase) spelling of a case-insensitive enum value."""
    options = list(choices)
    if isinstance(value, str):
        for option in options:
            if option.lower() == value.lower():
                return option
    hint = did_you_mean(value, options) if isinstance(value, str) else ""
    raise ValidationError(path, f"must be one of {', '.join(options)}{hint}")


def string_map(
    value: Any,
    path: str,
    *,
    max_items: int = 100,
    max_key_length: int | None = None,
    max_value_length: int = 4096,
) -> dict[str, str]:
    """A JSON object of strings (headers, tags, custom message properties); a name that is
    empty or too long is reported on the object (`path`), a value on its own path."""
    source = obj(value, path)
    if len(source) > max_items:
        raise ValidationError(path, f"must have at most {max_items} entries")
    result: dict[str, str] = {}
    for key, item in source.items():
        if max_key_length is not None and not 0 < len(key) <= max_key_length:
            raise ValidationError(path, f"names must be 1-{max_key_length} characters")
        result[key] = string(item, join(path, key), max_length=max_value_length, empty=True)
    return result


def parse_datetime(value: Any, path: str) -> datetime:
    """An ISO 8601 date-time or date (`2026-12-31` is its midnight); naive stays naive
    (the recurrence engine decides its zone)."""
    if not isinstance(value, str) or not value:
        raise ValidationError(path, "must be an ISO 8601 date-time string")
    text = value.strip()
    try:
        if len(text) == 10:
            return datetime.fromisoformat(text)
        return datetime.fromisoformat(text.replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        try:
            return isodate.parse_datetime(text)
        except (ValueError, isodate.ISO8601Error):
            raise ValidationError(path, "must be an ISO 8601 date-time string") from None


def instant(value: Any, path: str) -> datetime:
    """An ISO 8601 date-time that names an instant, as aware UTC; naive is read as UTC. One
    that lies outside years 1-9999 once in UTC (`0001-01-01T00:00:00+14:00`,
    `9999-12-31T23:59:59-14:00`) is a ValidationError naming `path`, not an OverflowError."""
    moment = parse_datetime(value, path)
    try:
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    except OverflowError:
        raise ValidationError(path, f"{moment.isoformat()} is out of range in UTC") from None


def instant_string(value: Any, path: str) -> str:
    """`datetime_string` of a field that names an instant (read as UTC when naive): also in
    range once in UTC."""
    instant(value, path)
    return value.strip()


def datetime_string(value: Any, path: str) -> str:
    """Validate a date-time and keep the user's text (its offset or its absence matters to
    the recurrence engine: a naive time is read in `recurrence.timeZone`)."""
    parse_datetime(value, path)
    return value.strip()


def duration(value: Any, path: str, *, low: timedelta | None = None) -> str:
    """A duration, as an ISO 8601 text (`PT30S`, `P1D`) or a .NET TimeSpan (`00:00:30`,
    `1.02:03:04.5000000`: what the .NET SDK 2.x sends), in canonical ISO form: what the
    client meant (its spelling is `original_form`'s business). Years and months are
    refused because their length is not fixed."""
    if not isinstance(value, str):
        raise ValidationError(path, f"must be {DURATION_FORMS}")
    parsed = read_timespan(value, path)
    if parsed is None:
        if not value.strip().upper().lstrip("+-").startswith("P"):
            raise ValidationError(path, f"must be {DURATION_FORMS}")
        parsed = read_iso_duration(value, path)  # liberal: `pt30s`, `PT1D`
    if not isinstance(parsed, timedelta):
        raise ValidationError(path, "must use days, hours, minutes or seconds")
    if parsed < timedelta(0):
        raise ValidationError(path, "must not be negative")
    if low is not None and parsed < low:
        raise ValidationError(path, f"must be at least {isodate.duration_isoformat(low)}")
    return isodate.duration_isoformat(parsed)


DURATION_FORMS = "an ISO 8601 duration (e.g. PT30S) or a TimeSpan (e.g. 00:00:30)"
