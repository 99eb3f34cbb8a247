"""A job's timing (`startTime`, `recurrence`) in canonical stored form.

The recurrence engine (`scheduler_lib.schedule.parse`) validates values and ranges; this
module only makes the stored JSON canonical so the dispatcher and executor read one
spelling: key names as the semantics document writes them (`occurrence` lower-case, though
the SDK sends `Occurrence`), PascalCase frequencies and day names, a scalar where a list is
expected turned into a one-element list (how an answer spells them is `dialect`'s). Dates
keep the user's text, because a date-time without an offset is a wall-clock reading in
`recurrence.timeZone`.
"""

from __future__ import annotations

from typing import Any

from scheduler_lib.errors import ValidationError
from scheduler_lib.schedule import FREQUENCIES, WEEKDAYS, JobTiming, parse_job_timing
from scheduler_lib.wire import extensions, readers
from scheduler_lib.wire.shapes import JSONObject
from scheduler_lib.wire.versions import DEFAULT_VERSION, ApiVersion, Location

RECURRENCE_KEYS = ("frequency", "interval", "schedule", "count", "endTime", "timeZone")
SCHEDULE_KEYS = ("minutes", "hours", "weekDays", "monthDays", "monthlyOccurrences", "months")


def _canonical_enum(value: Any, choices: tuple[str, ...]) -> Any:
    """The canonical spelling when `value` names a choice in any case; otherwise the value
    unchanged, for the engine to reject with its own message."""
    if isinstance(value, str):
        for choice in choices:
            if choice.lower() == value.strip().lower():
                return choice
    return value


def _as_list(value: Any) -> Any:
    return value if isinstance(value, list) else [value]


def normalize_recurrence(
    value: Any, path: str, *, version: ApiVersion = DEFAULT_VERSION
) -> JSONObject:
    """`recurrence` with canonical keys and enum spellings (values validated elsewhere);
    the extension properties `version` has are validated by their own validators."""
    extra = extensions.names(Location.RECURRENCE, version)
    result: JSONObject = {}
    for key, item, where in readers.present(value, path, RECURRENCE_KEYS + extra):
        if key in extra:
            continue
        if key == "frequency":
            item = _canonical_enum(item, FREQUENCIES)
        elif key == "schedule":
            item = _schedule(item, where)
        elif key == "endTime":
            item = readers.datetime_string(item, where)
        result[key] = item
    if extra:
        source = readers.keys(value, path, RECURRENCE_KEYS + extra)
        result.update(extensions.read(Location.RECURRENCE, source, path, version))
    return result


def _schedule(value: Any, path: str) -> JSONObject:
    result: JSONObject = {}
    for key, value_given, where in readers.present(value, path, SCHEDULE_KEYS):
        item = _as_list(value_given)
        if key == "weekDays":
            item = [_canonical_enum(day, WEEKDAYS) for day in item]
        elif key == "monthlyOccurrences":
            item = [_occurrence(entry, f"{where}[{index}]") for index, entry in enumerate(item)]
        result[key] = item
    return result


def _occurrence(value: Any, path: str) -> JSONObject:
    source = readers.keys(_one_occurrence_key(value), path, ("day", "occurrence"))
    result: JSONObject = {}
    if source.get("day") is not None:
        result["day"] = _canonical_enum(source["day"], WEEKDAYS)
    if source.get("occurrence") is not None:
        result["occurrence"] = source["occurrence"]
    return result


def _one_occurrence_key(value: Any) -> Any:
    """A monthly occurrence with one `occurrence` key: a 2016-03-01 answer writes its number
    as both `occurrence` and `Occurrence` (`dialect`), and a client may send back what it
    read. The same number twice is one; two different numbers stay an error."""
    if not isinstance(value, dict):
        return value
    spellings = [key for key in value if key.lower() == "occurrence"]
    if len(spellings) < 2 or len({repr(value[key]) for key in spellings}) > 1:
        return value
    return {k: v for k, v in value.items() if k not in spellings[1:]}


def validate_timing(properties: JSONObject) -> JobTiming:
    """Run the recurrence engine's validation; its paths are relative to the job properties,
    the API's are relative to the body, hence the `properties.` prefix. Returns the parsed
    timing, for the caller to build the schedule from without parsing it again."""
    try:
        return parse_job_timing(properties)
    except ValidationError as exc:
        raise prefixed(exc) from None


def prefixed(exc: ValidationError, prefix: str = "properties") -> ValidationError:
    """The same error with its field path under `prefix`."""
    if exc.field.startswith(f"{prefix}.") or exc.field == prefix:
        return exc
    field = f"{prefix}.{exc.field}" if exc.field else prefix
    message = exc.message.removeprefix(f"{exc.field}: ") if exc.field else exc.message
    return ValidationError(field, message)
