"""The OData query options of the list operations: `$top`, `$skip`, `$filter`.

`$filter` takes the one form Azure Scheduler documented, `<field> eq <value>`, on `state`
(jobs) or `status` (history); the value may be quoted or not and is matched in any case
(`state eq 'Enabled'`, `state eq enabled`, `status eq Failed`). Anything else is a 400
naming `$filter`, never silently an unfiltered list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scheduler_lib.errors import ValidationError
from scheduler_lib.wire import readers

MAX_TOP = 100
_FILTER = re.compile(r"^\s*([A-Za-z]+)\s+eq\s+(?:'([^']*)'|\"([^\"]*)\"|([A-Za-z]+))\s*$", re.I)


@dataclass(frozen=True)
class ListOptions:
    top: int
    skip: int
    filter_value: str | None


def parse_options(
    top: str | None,
    skip: str | None,
    filter_text: str | None,
    *,
    field: str,
    values: tuple[str, ...],
) -> ListOptions:
    """Validated list options; `field`/`values` are what `$filter` may name."""
    return ListOptions(
        top=_integer(top, "$top", 1, MAX_TOP, default=MAX_TOP),
        skip=_integer(skip, "$skip", 0, 1_000_000, default=0),
        filter_value=parse_filter(filter_text, field, values),
    )


def _integer(text: str | None, name: str, low: int, high: int, *, default: int) -> int:
    if text is None:
        return default
    stripped = text.strip()
    if not re.fullmatch(r"[+-]?\d{1,9}", stripped):
        raise ValidationError(name, f"must be an integer from {low} to {high}")
    value = int(stripped)
    if not low <= value <= high:
        raise ValidationError(name, f"must be an integer from {low} to {high}")
    return value


def parse_filter(text: str | None, field: str, values: tuple[str, ...]) -> str | None:
    """The canonical value of `<field> eq <value>`, or None without a filter."""
    if text is None or not text.strip():
        return None
    match = _FILTER.match(text)
    if match is None:
        raise ValidationError("$filter", f"must have the form: {field} eq '<value>'")
    name = match.group(1)
    value = next(group for group in match.groups()[1:] if group is not None)
    if name.lower() != field.lower():
        raise ValidationError("$filter", f"can only filter on {field}")
    return readers.enum(value, "$filter", values)
