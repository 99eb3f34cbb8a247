"""An ARM template's scope: its parameters and variables, evaluated lazily, and the
evaluation of any JSON value in it (with property `copy` loops and `--set` overrides).

A parameter's value is, in order: a `--set NAME=VALUE`, the parameters file, its
`defaultValue` (an expression may use other parameters and, there only, `utcNow()`). Without
any, it is an `Unknown`: refused where it is read, except in a secret's place, where the job
imports Disabled (`missing_secrets`). A value outside `allowedValues` or of another type than
declared is refused, as ARM refuses the deployment. Variables may hold `copy` loops. Nothing
is evaluated that the scheduler resources do not read: a template's other resources may need
parameters the import never asks for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from scheduler_lib.domain.json_values import JSON, JSONObject
from scheduler_lib.migrate.arm_eval import evaluate_template_string
from scheduler_lib.migrate.deployment_functions import Deployment
from scheduler_lib.migrate.functions import is_int, kind
from scheduler_lib.migrate.memo import Memo
from scheduler_lib.migrate.overrides import Overrides, typed
from scheduler_lib.migrate.problems import (
    Evaluated,
    SourceError,
    Unknown,
    Unresolved,
    parameter_hint,
)

#: Called with (path, refusal) when a value cannot be known; returns what to use instead
#: (e.g. a missing secret's marker) or raises.
OnUnresolved = Callable[[str, Unresolved], Any]
V = TypeVar("V")
_TYPES = {"string": str, "securestring": str, "int": int, "bool": bool, "object": dict,
          "secureobject": dict, "array": list}  # fmt: skip


def _raise(path: str, error: Unresolved) -> Any:
    raise error


def lookup(mapping: Mapping[str, V], name: str) -> tuple[str, V] | None:
    """A template name, matched case-insensitively as ARM matches them."""
    return next(((k, v) for k, v in mapping.items() if k.lower() == name.lower()), None)


def section(document: JSONObject, name: str) -> JSONObject:
    """A template's `parameters` or `variables` object ({} when absent)."""
    value = document.get(name) or {}
    if not isinstance(value, dict):
        raise SourceError(name, "must be an object")
    return value


def require_object(value: JSON, path: str, what: str = "an object") -> JSONObject:
    """`value` where the template must hold an object (a declaration, a copy loop)."""
    if not isinstance(value, dict):
        raise SourceError(path, f"must be {what}")
    return value


class Template:
    """One template with its given parameter values, evaluated for one deployment."""

    def __init__(
        self,
        document: JSONObject,
        *,
        given: dict[str, Evaluated],
        overrides: Overrides,
        deployment: Deployment,
    ) -> None:
        self.document = document
        self.given = given
        self.overrides = overrides
        self.deployment = deployment
        self.in_default = False
        self.loops: list[tuple[str | None, int]] = []  # (loop name, index), innermost last
        self._memo: Memo[Evaluated] = Memo(
            "refers to itself (through other parameters or variables)"
        )

    # --- the Scope protocol ----------------------------------------------------------------

    def parameter(self, name: str) -> Any:
        found = lookup(section(self.document, "parameters"), name)
        if found is None:
            raise SourceError("", f"parameters({name!r}): the template declares no such parameter")
        key = found[0]
        declaration = require_object(found[1], f"parameters.{key}", "an object (its declaration)")
        return self._memo.get(f"parameters.{key}", lambda: self._resolve(key, declaration))

    def variable(self, name: str) -> Any:
        found = lookup(section(self.document, "variables"), name)
        if found is None:
            copies = section(self.document, "variables").get("copy") or []
            if not isinstance(copies, list):
                raise SourceError("variables.copy", "must be an array of copy loops")
            loops = [require_object(c, f"variables.copy[{i}]") for i, c in enumerate(copies)]
            loop = next((c for c in loops if str(c.get("name", "")).lower() == name.lower()), None)
            if loop is None:
                raise SourceError(
                    "", f"variables({name!r}): the template declares no such variable"
                )
            key = f"variables.copy[{loops.index(loop)}]"
            compute: Callable[[], Evaluated] = lambda: self.copy_values(loop, key, _raise)  # noqa: E731
        else:
            key = f"variables.{found[0]}"
            value = found[1]
            compute = lambda: self.value(value, key)  # noqa: E731
        return self._memo.get(key, compute)

    def copy_index(self, loop: str | None) -> int:
        for name, index in reversed(self.loops):
            if loop is None or (name or "").lower() == loop.lower():
                return index
        raise SourceError("", f"copyIndex({loop or ''}) is used outside a copy loop of that name")

    # --- parameters ----------------------------------------------------------------------------

    def _resolve(self, name: str, declaration: JSONObject) -> Any:
        path = f"parameters.{name}"
        declared = str(declaration.get("type", "string"))
        text = self.overrides.parameter(name)
        value: Evaluated
        if text is not None:
            value = typed(name, declared, text)
        elif (given := lookup(self.given, name)) is not None:
            value = given[1]
        elif "defaultValue" in declaration:
            self.in_default, saved = True, self.in_default
            try:
                value = self.value(declaration["defaultValue"], f"{path}.defaultValue")
            except Unresolved as error:
                return Unknown(
                    f"parameter {name!r} has no value and its default {error.detail}",
                    parameter_hint(name, error),
                )
            finally:
                self.in_default = saved
        else:
            return Unknown(
                f"parameter {name!r} has no value",
                f"give it in --parameters FILE or with --set {name}=VALUE",
            )
        if isinstance(value, Unknown):
            return value
        _check(path, declared, value, declaration.get("allowedValues"))
        return value

    # --- values --------------------------------------------------------------------------------

    def value(self, value: Any, path: str, on_unresolved: OnUnresolved = _raise) -> Any:
        """A JSON value of the template, evaluated; `path` names it in messages and is what
        a `--set path=VALUE` replaces."""
        replaced, replacement = self.overrides.at(path)
        if replaced:
            return replacement
        if isinstance(value, str):
            try:
                return evaluate_template_string(value, self)
            except Unresolved as error:
                return on_unresolved(path, error.at(path))
            except SourceError as error:
                raise error.at(path) from None
        if isinstance(value, list):
            return [self.value(item, f"{path}[{i}]", on_unresolved) for i, item in enumerate(value)]
        if isinstance(value, dict):
            result: dict[str, Evaluated] = {}
            for key, item in value.items():
                if key == "copy" and isinstance(item, list) and path:
                    for i, loop in enumerate(item):
                        where = f"{path}.copy[{i}]"
                        loop = require_object(loop, where, "an object with name, count and input")
                        result[str(loop.get("name"))] = self.copy_values(loop, where, on_unresolved)
                    continue
                evaluated = self.value(item, f"{path}.{key}" if path else key, on_unresolved)
                if evaluated is not MISSING:
                    result[key] = evaluated
            return result
        return value

    def copy_values(
        self, loop: JSONObject, path: str, on_unresolved: OnUnresolved
    ) -> list[Evaluated]:
        """A property or variable `copy` loop: `count` copies of `input`."""
        count = self.count(loop.get("count"), f"{path}.count")
        name = str(loop.get("name"))
        values = []
        for index in range(count):
            self.loops.append((name, index))
            try:
                values.append(self.value(loop.get("input"), f"{path}.input", on_unresolved))
            finally:
                self.loops.pop()
        return values

    def count(self, value: Any, path: str) -> int:
        count = self.value(value, path)
        if not is_int(count) or not 0 <= count <= 800:
            raise SourceError(path, f"a copy count must be an integer 0-800, not {count!r}")
        return int(count)


class _Missing:
    """What `on_unresolved` returns for a secret it records as missing: the key is left out."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()


def _check(path: str, declared: str, value: Any, allowed: Any) -> None:
    expected = _TYPES.get(declared.lower())
    matches = expected is None or (
        is_int(value) if expected is int else isinstance(value, expected)
    )
    if not matches:
        raise SourceError(path, f"is declared {declared} but the value is {kind(value)}")
    if isinstance(allowed, list) and value not in allowed:
        shown = value if declared.lower() not in ("securestring", "secureobject") else "(secret)"
        raise SourceError(path, f"{shown!r} is not one of its allowedValues {allowed}")
