"""Template functions on logic, comparison, arrays and objects (see `functions`).

Registered into the same table as the string functions. ARM's rules kept: `equals` and
`contains` on strings are case-sensitive, `union` merges objects shallowly left to right
(later wins) and keeps the first occurrence of array items, `less`/`greater` compare two
integers or two strings (ordinal).
"""

from __future__ import annotations

from typing import Any

from scheduler_lib.migrate.functions import (
    FUNCTIONS,
    ArgumentError,
    int_arg,
    is_int,
    kind,
    to_string,
)
from scheduler_lib.migrate.problems import Evaluated


def _bool(function: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ArgumentError(function, f"expects a bool, not {kind(value)}")
    return value


def _and(*values: Any) -> bool:
    return all(_bool("and", v) for v in values)


def _or(*values: Any) -> bool:
    return any(_bool("or", v) for v in values)


def _compare(function: str, a: Any, b: Any) -> int:
    if is_int(a) and is_int(b):
        return (a > b) - (a < b)
    if isinstance(a, str) and isinstance(b, str):
        return (a > b) - (a < b)
    raise ArgumentError(function, f"compares two ints or two strings, not {kind(a)} and {kind(b)}")


def _equals(a: Any, b: Any) -> bool:
    """Values of one type that are equal (a string never equals a number, nor true 1)."""
    same_kind = type(a) is type(b) or (is_int(a) and is_int(b))
    return same_kind and a == b


def _if(condition: Any, yes: Any, no: Any) -> Any:
    return yes if _bool("if", condition) else no


def _coalesce(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def _sequence(function: str, value: Any) -> list[Any] | str:
    if not isinstance(value, list | str):
        raise ArgumentError(function, f"expects an array or a string, not {kind(value)}")
    return value


def _first(value: Any) -> Any:
    items = _sequence("first", value)
    return items[0] if items else None


def _last(value: Any) -> Any:
    items = _sequence("last", value)
    return items[-1] if items else None


def _take(value: Any, count: Any) -> Any:
    return _sequence("take", value)[: max(0, int_arg("take", count))]


def _skip(value: Any, count: Any) -> Any:
    return _sequence("skip", value)[max(0, int_arg("skip", count)) :]


def _contains(container: Any, item: Any) -> bool:
    if isinstance(container, str):
        if not isinstance(item, str):
            raise ArgumentError("contains", "looks for a string in a string")
        return item in container
    if isinstance(container, dict):
        return isinstance(item, str) and any(k.lower() == item.lower() for k in container)
    if isinstance(container, list):
        return item in container
    raise ArgumentError(
        "contains", f"looks in a string, an array or an object, not {kind(container)}"
    )


def _union(*values: Any) -> Any:
    if values and all(isinstance(v, dict) for v in values):
        merged: dict[str, Evaluated] = {}
        for value in values:
            merged.update(value)
        return merged
    if values and all(isinstance(v, list) for v in values):
        result: list[Any] = []
        for value in values:
            result.extend(item for item in value if item not in result)
        return result
    raise ArgumentError("union", "takes objects or arrays, all of one kind")


def _intersection(first: Any, *others: Any) -> Any:
    if isinstance(first, dict) and all(isinstance(o, dict) for o in others):
        return {k: v for k, v in first.items() if all(o.get(k, object()) == v for o in others)}
    if isinstance(first, list) and all(isinstance(o, list) for o in others):
        result: list[Any] = []
        for item in first:
            if item not in result and all(item in o for o in others):
                result.append(item)
        return result
    raise ArgumentError("intersection", "takes objects or arrays, all of one kind")


def _create_object(*pairs: Any) -> dict[str, Evaluated]:
    if len(pairs) % 2:
        raise ArgumentError("createObject", "takes name, value pairs")
    result: dict[str, Evaluated] = {}
    for name, value in zip(pairs[::2], pairs[1::2], strict=True):
        if not isinstance(name, str):
            raise ArgumentError("createObject", "property names must be strings")
        result[name] = value
    return result


def _range(start: Any, count: Any) -> list[int]:
    first, size = int_arg("range", start), int_arg("range", count)
    if size < 0 or size > 10_000:
        raise ArgumentError("range", "the count must be 0 to 10000")
    return list(range(first, first + size))


def _join(values: Any, delimiter: Any) -> str:
    if not isinstance(values, list) or not isinstance(delimiter, str):
        raise ArgumentError("join", "joins an array of strings with a string")
    return delimiter.join(to_string(v) for v in values)


def _items(value: Any) -> list[dict[str, Evaluated]]:
    if not isinstance(value, dict):
        raise ArgumentError("items", f"expects an object, not {kind(value)}")
    return [{"key": k, "value": v} for k, v in sorted(value.items(), key=lambda kv: kv[0])]


def _min_max(function: str, pick: Any) -> Any:
    def compute(*values: Any) -> int:
        flat = values[0] if len(values) == 1 and isinstance(values[0], list) else values
        if not flat:
            raise ArgumentError(function, "needs at least one integer")
        return int(pick(int_arg(function, v) for v in flat))

    return compute


FUNCTIONS.update({
    "and": _and,
    "or": _or,
    "not": lambda value: not _bool("not", value),
    "true": lambda: True,
    "false": lambda: False,
    "null": lambda: None,
    "if": _if,
    "coalesce": _coalesce,
    "equals": _equals,
    "less": lambda a, b: _compare("less", a, b) < 0,
    "lessorequals": lambda a, b: _compare("lessOrEquals", a, b) <= 0,
    "greater": lambda a, b: _compare("greater", a, b) > 0,
    "greaterorequals": lambda a, b: _compare("greaterOrEquals", a, b) >= 0,
    "array": lambda value: value if isinstance(value, list) else [value],
    "createarray": lambda *values: list(values),
    "createobject": _create_object,
    "first": _first,
    "last": _last,
    "take": _take,
    "skip": _skip,
    "contains": _contains,
    "union": _union,
    "intersection": _intersection,
    "range": _range,
    "join": _join,
    "items": _items,
    "min": _min_max("min", min),
    "max": _min_max("max", max),
})  # fmt: skip
