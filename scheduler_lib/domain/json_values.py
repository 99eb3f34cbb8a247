"""JSON values as a type mypy checks: what `json.loads` can return, recursively.

For data that is JSON by nature and has no fixed shape where it is handled (a document
walked by path, a record's opaque part kept as read, a schema fragment): reading a part
then needs an isinstance check (`as_object`, `as_list`), so code cannot assume a shape
it was never given. Fixed shapes get TypedDicts (`wire.shapes`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeAlias

JSON: TypeAlias = "dict[str, JSON] | list[JSON] | str | int | float | bool | None"
JSONObject: TypeAlias = "dict[str, JSON]"


def as_object(value: JSON) -> JSONObject:
    """`value` if it is a JSON object, else `{}` (a part that is absent or null)."""
    return value if isinstance(value, dict) else {}


def as_list(value: JSON) -> list[JSON]:
    """`value` if it is a JSON array, else `[]` (a part that is absent or null)."""
    return value if isinstance(value, list) else []


def json_object(values: Mapping[str, JSON]) -> JSONObject:
    """A JSON object of the entries: a copy, as mypy rightly will not take a `dict[str, str]`
    for a `dict[str, JSON]` (dicts are invariant: one could put a list into it)."""
    return dict(values)
