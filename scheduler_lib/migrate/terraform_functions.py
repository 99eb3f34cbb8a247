"""The Terraform functions a configuration of scheduler jobs may call, as Terraform defines
them (`lower`, `format`, `lookup`, `file`, ...). `file` and `filebase64` read files relative
to the module's directory, as Terraform does; a file that is not there is an `Unknown`
(a certificate kept elsewhere), not an error. `timestamp()` is the `--import-time`, never
the clock (see `deployment_functions.utc_now`).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from scheduler_lib.migrate.confine import readable, shown
from scheduler_lib.migrate.functions import ArgumentError, is_int, kind
from scheduler_lib.migrate.problems import Evaluated, Unknown


def tf_string(value: Any) -> str:
    """A value in a string template, as Terraform converts it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str | int | float):
        return str(value)
    raise ArgumentError("template", f"cannot put {kind(value)} into a string")


def _format(spec: Any, *args: Any) -> str:
    if not isinstance(spec, str):
        raise ArgumentError("format", "takes a format string")
    values = iter(args)

    def one(match: re.Match[str]) -> str:
        verb = match.group(1)
        if verb == "%":
            return "%"
        try:
            value = next(values)
        except StopIteration:
            raise ArgumentError("format", "has more verbs than arguments") from None
        if verb == "q":
            return json.dumps(tf_string(value))
        if verb == "d" and not is_int(value):
            raise ArgumentError("format", f"%d needs a number, not {kind(value)}")
        return (
            json.dumps(value)
            if verb == "v" and isinstance(value, list | dict)
            else tf_string(value)
        )

    return re.sub(r"%([sdvq%])", one, spec)


def _replace(value: Any, old: Any, new: Any) -> str:
    if not all(isinstance(v, str) for v in (value, old, new)):
        raise ArgumentError("replace", "takes three strings")
    if len(old) > 1 and old.startswith("/") and old.endswith("/"):
        raise ArgumentError("replace", "regular expressions (/.../) are not supported")
    return str(value).replace(old, new)


def _lookup(mapping: Any, key: Any, *default: Any) -> Any:
    if not isinstance(mapping, dict):
        raise ArgumentError("lookup", f"looks up in a map, not {kind(mapping)}")
    if key in mapping:
        return mapping[key]
    if default:
        return default[0]
    raise ArgumentError("lookup", f"the map has no key {key!r} and no default is given")


def _element(items: Any, index: Any) -> Any:
    if not isinstance(items, list) or not items or not is_int(index):
        raise ArgumentError("element", "takes a non-empty list and an index")
    return items[index % len(items)]


def _coalesce(*values: Any) -> Any:
    for value in values:
        if value is not None and value != "":
            return value
    raise ArgumentError("coalesce", "all arguments are null or empty")


def _merge(*maps: Any) -> dict[str, Evaluated]:
    merged: dict[str, Evaluated] = {}
    for item in maps:
        if not isinstance(item, dict):
            raise ArgumentError("merge", f"merges maps, not {kind(item)}")
        merged.update(item)
    return merged


def _number(value: Any) -> Any:
    if is_int(value) or isinstance(value, float):
        return value
    try:
        number = float(str(value))
    except ValueError:
        raise ArgumentError("tonumber", f"{value!r} is not a number") from None
    return int(number) if number.is_integer() else number


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if value in ("true", "false"):
        return value == "true"
    raise ArgumentError("tobool", f"{value!r} is not a bool")


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "lower": lambda s: str(s).lower(),
    "upper": lambda s: str(s).upper(),
    "title": lambda s: str(s).title(),
    "trimspace": lambda s: str(s).strip(),
    "trimprefix": lambda s, p: str(s).removeprefix(p),
    "trimsuffix": lambda s, p: str(s).removesuffix(p),
    "format": _format,
    "join": lambda sep, items: str(sep).join(tf_string(i) for i in items),
    "split": lambda sep, s: str(s).split(sep),
    "replace": _replace,
    "substr": lambda s, o, n: str(s)[o : (None if n == -1 else o + n)],
    "concat": lambda *lists: [item for items in lists for item in items],
    "lookup": _lookup,
    "element": _element,
    "length": lambda v: len(v),
    "contains": lambda items, v: v in items,
    "coalesce": _coalesce,
    "merge": _merge,
    "min": lambda *v: min(v),
    "max": lambda *v: max(v),
    "abs": lambda v: abs(v),
    "tostring": tf_string,
    "tonumber": _number,
    "tobool": _bool,
    "tolist": lambda v: list(v),
    "jsonencode": lambda v: json.dumps(v, separators=(",", ":")),
    "jsondecode": lambda v: json.loads(v),
    "base64encode": lambda v: base64.b64encode(str(v).encode()).decode(),
    "base64decode": lambda v: base64.b64decode(str(v)).decode(),
}


def call_file(name: str, args: list[Any], module_dir: Path) -> Any:
    """`file(path)` / `filebase64(path)`: the file's content, relative to the module."""
    if len(args) != 1 or not isinstance(args[0], str):
        raise ArgumentError(name, "takes one path")
    target = module_dir / args[0]
    if not readable(target):
        return Unknown(f"the file {args[0]!r} is not there (relative to {shown(module_dir)})")
    data = target.read_bytes()
    return base64.b64encode(data).decode() if name == "filebase64" else data.decode()


def timestamp(import_time: datetime | None) -> Any:
    if import_time is None:
        return Unknown(
            "it is the time of terraform apply, which an import must not make up",
            "give --import-time ISO",
        )
    return import_time.strftime("%Y-%m-%dT%H:%M:%SZ")
