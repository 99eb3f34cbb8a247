"""The template functions that depend on their arguments alone: strings, numbers, logic,
arrays and objects, as Azure Resource Manager defines them (Bicep calls the same ones).

Values are JSON values (str, int, bool, list, dict, None). Each function checks its
arguments and raises a `SourceError` naming itself on a wrong one, as a deployment would
fail. ARM's quirks are kept where a template can observe them: `string(true)` is `True`
(.NET), integer division truncates toward zero, `concat` of arrays concatenates them.
Functions that depend on the deployment (`resourceGroup()`, `utcNow()`, ...) are in
`deployment_functions`; `if` and `coalesce` are evaluated lazily by the evaluators.
"""

from __future__ import annotations

import base64
import json
import urllib.parse
from collections.abc import Callable
from typing import Any

from scheduler_lib.migrate.problems import SourceError

Function = Callable[..., Any]
FUNCTIONS: dict[str, Function] = {}


def _register(*names: str) -> Callable[[Function], Function]:
    def add(function: Function) -> Function:
        for name in names:
            FUNCTIONS[name.lower()] = function
        return function

    return add


class ArgumentError(SourceError):
    def __init__(self, function: str, message: str) -> None:
        super().__init__("", f"{function}(): {message}")


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def str_arg(function: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ArgumentError(function, f"expects a string, not {kind(value)}")
    return value


def int_arg(function: str, value: Any) -> int:
    if not is_int(value):
        raise ArgumentError(function, f"expects an integer, not {kind(value)}")
    return int(value)


def kind(value: Any) -> str:
    """The template type of a value, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a bool"
    if is_int(value):
        return "an int"
    names: dict[type, str] = {str: "a string", list: "an array", dict: "an object"}
    return names.get(type(value), "a value")


def to_string(value: Any) -> str:
    """`string(value)` as ARM writes it: .NET's True/False, compact JSON for containers."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, list | dict):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return str(value)


@_register("string")
def _string(value: Any) -> str:
    return to_string(value)


@_register("concat")
def _concat(*args: Any) -> Any:
    if args and all(isinstance(a, list) for a in args):
        return [item for a in args for item in a]
    if any(isinstance(a, list | dict) for a in args):
        raise ArgumentError("concat", "takes strings (and numbers) or arrays, not a mix")
    return "".join(to_string(a) for a in args)


@_register("format")
def _format(template: Any, *args: Any) -> str:
    text, out, i = str_arg("format", template), [], 0
    while i < len(text):
        char = text[i]
        if char in "{}" and text[i : i + 2] in ("{{", "}}"):
            out.append(char)
            i += 2
        elif char == "{":
            end = text.find("}", i)
            spec = text[i + 1 : end] if end > 0 else ""
            if not spec.isdigit():
                raise ArgumentError(
                    "format", f"only {{n}} placeholders are supported, not {{{spec}"
                )
            if int(spec) >= len(args):
                raise ArgumentError("format", f"{{{spec}}} has no argument")
            out.append(to_string(args[int(spec)]))
            i = end + 1
        else:
            out.append(char)
            i += 1
    return "".join(out)


@_register("toLower")
def _lower(value: Any) -> str:
    return str_arg("toLower", value).lower()


@_register("toUpper")
def _upper(value: Any) -> str:
    return str_arg("toUpper", value).upper()


@_register("trim")
def _trim(value: Any) -> str:
    return str_arg("trim", value).strip()


@_register("replace")
def _replace(value: Any, old: Any, new: Any) -> str:
    return str_arg("replace", value).replace(str_arg("replace", old), str_arg("replace", new))


@_register("substring")
def _substring(value: Any, start: Any, length: Any = None) -> str:
    text, begin = str_arg("substring", value), int_arg("substring", start)
    size = len(text) - begin if length is None else int_arg("substring", length)
    if begin < 0 or size < 0 or begin + size > len(text):
        raise ArgumentError("substring", "start and length lie outside the string")
    return text[begin : begin + size]


@_register("padLeft")
def _pad_left(value: Any, width: Any, padding: Any = " ") -> str:
    pad = str_arg("padLeft", padding)
    if len(pad) != 1:
        raise ArgumentError("padLeft", "the padding must be one character")
    return to_string(value).rjust(int_arg("padLeft", width), pad)


@_register("split")
def _split(value: Any, delimiters: Any) -> list[str]:
    parts = [str_arg("split", value)]
    separators = delimiters if isinstance(delimiters, list) else [delimiters]
    for separator in separators:
        parts = [piece for part in parts for piece in part.split(str_arg("split", separator))]
    return parts


@_register("startsWith")
def _starts(value: Any, prefix: Any) -> bool:
    return str_arg("startsWith", value).lower().startswith(str_arg("startsWith", prefix).lower())


@_register("endsWith")
def _ends(value: Any, suffix: Any) -> bool:
    return str_arg("endsWith", value).lower().endswith(str_arg("endsWith", suffix).lower())


@_register("indexOf")
def _index_of(value: Any, item: Any) -> int:
    return str_arg("indexOf", value).lower().find(str_arg("indexOf", item).lower())


@_register("lastIndexOf")
def _last_index_of(value: Any, item: Any) -> int:
    return str_arg("lastIndexOf", value).lower().rfind(str_arg("lastIndexOf", item).lower())


@_register("base64")
def _base64(value: Any) -> str:
    return base64.b64encode(str_arg("base64", value).encode()).decode()


@_register("base64ToString")
def _base64_to_string(value: Any) -> str:
    try:
        return base64.b64decode(str_arg("base64ToString", value), validate=True).decode()
    except ValueError:
        raise ArgumentError("base64ToString", "the value is not base64 of UTF-8 text") from None


@_register("json")
def _json(value: Any) -> Any:
    try:
        return json.loads(str_arg("json", value))
    except json.JSONDecodeError as error:
        raise ArgumentError("json", f"not valid JSON ({error.msg})") from None


@_register("base64ToJson")
def _base64_to_json(value: Any) -> Any:
    return _json(_base64_to_string(value))


@_register("uriComponent")
def _uri_component(value: Any) -> str:
    return urllib.parse.quote(str_arg("uriComponent", value), safe="")


@_register("uriComponentToString")
def _uri_component_to_string(value: Any) -> str:
    return urllib.parse.unquote(str_arg("uriComponentToString", value))


@_register("uri")
def _uri(base: Any, relative: Any) -> str:
    return urllib.parse.urljoin(str_arg("uri", base), str_arg("uri", relative))


@_register("length")
def _length(value: Any) -> int:
    if not isinstance(value, str | list | dict):
        raise ArgumentError("length", f"expects a string, an array or an object, not {kind(value)}")
    return len(value)


@_register("empty")
def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str | list | dict) and len(value) == 0)


@_register("int")
def _to_int(value: Any) -> int:
    if is_int(value):
        return int(value)
    try:
        return int(str_arg("int", value).strip())
    except ValueError:
        raise ArgumentError("int", "the string is not an integer") from None


@_register("bool")
def _to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if is_int(value):
        return value != 0
    text = str_arg("bool", value).strip().lower()
    if text not in ("true", "false"):
        raise ArgumentError("bool", "the string is neither true nor false")
    return text == "true"


def _arith(name: str, operation: Callable[[int, int], int]) -> None:
    FUNCTIONS[name.lower()] = lambda a, b: operation(int_arg(name, a), int_arg(name, b))


def _divide(name: str, a: int, b: int, modulo: bool) -> int:
    if b == 0:
        raise ArgumentError(name, "division by zero")
    quotient = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)  # toward zero, as .NET
    return a - quotient * b if modulo else quotient


_arith("add", lambda a, b: a + b)
_arith("sub", lambda a, b: a - b)
_arith("mul", lambda a, b: a * b)
_arith("div", lambda a, b: _divide("div", a, b, modulo=False))
_arith("mod", lambda a, b: _divide("mod", a, b, modulo=True))
