"""Evaluation of parsed ARM expressions (`arm_expression`) in a template's scope.

The scope answers `parameters()`, `variables()` and `copyIndex()`; `deployment_functions`
answers what depends on the deployment; `functions` (with `functions_data` and `dates`) the
rest. `if` and `coalesce` evaluate only the arguments they need, so an untaken branch may
refer to what cannot be known. Property access is case-insensitive, as in ARM. A value that
cannot be known raises `Unresolved` naming the smallest expression that read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from scheduler_lib.migrate import dates, functions_data  # noqa: F401  (register their functions)
from scheduler_lib.migrate import deployment_functions as deployment
from scheduler_lib.migrate.arm_expression import Call, Index, Literal, Member, Node, template_value
from scheduler_lib.migrate.functions import ArgumentError, is_int, kind
from scheduler_lib.migrate.problems import SourceError, Unknown, Unresolved


class Scope(Protocol):
    """What an expression can read besides its arguments."""

    @property
    def deployment(self) -> deployment.Deployment: ...

    @property
    def in_default(self) -> bool:
        """Whether the expression is a parameter's default (where utcNow() is allowed)."""
        ...

    def parameter(self, name: str) -> Any: ...

    def variable(self, name: str) -> Any: ...

    def copy_index(self, loop: str | None) -> int: ...


def evaluate_template_string(value: str, scope: Scope) -> Any:
    """A template string's value: itself, its `[[` escape undone, or its expression's value."""
    parsed = template_value(value)
    if isinstance(parsed, str):
        return parsed
    result = evaluate(parsed, scope)
    unknown = find_unknown(result)
    if unknown is not None:
        raise Unresolved("", parsed.text, unknown.reason, unknown.hint)
    return result


def find_unknown(value: Any) -> Unknown | None:
    """The first `Unknown` inside a value (a whole `resourceGroup()` object holds some)."""
    if isinstance(value, Unknown):
        return value
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return next((u for u in map(find_unknown, items) if u is not None), None)


def evaluate(node: Node, scope: Scope) -> Any:
    if isinstance(node, Literal):
        return node.value
    if isinstance(node, Member):
        value = _member(evaluate(node.target, scope), node.name, node.text)
    elif isinstance(node, Index):
        value = _index(evaluate(node.target, scope), _known(node.index, scope), node.text)
    else:
        value = _call(node, scope)
    if isinstance(value, Unknown):
        raise Unresolved("", node.text, value.reason, value.hint)
    return value


def _known(node: Node, scope: Scope) -> Any:
    """A value that must be known to go on: an `Unknown` argument is refused by name."""
    value = evaluate(node, scope)
    unknown = find_unknown(value)
    if unknown is not None:
        raise Unresolved("", node.text, unknown.reason, unknown.hint)
    return value


def _member(target: Any, name: str, text: str) -> Any:
    if not isinstance(target, Mapping):
        raise SourceError("", f"{text}: {kind(target)} has no properties")
    for key, value in target.items():
        if key.lower() == name.lower():
            return value
    raise SourceError("", f"{text}: there is no property {name!r}")


def _index(target: Any, index: Any, text: str) -> Any:
    if isinstance(target, list) and is_int(index):
        if not 0 <= index < len(target):
            raise SourceError("", f"{text}: index {index} is outside the array ({len(target)})")
        return target[index]
    if isinstance(target, Mapping) and isinstance(index, str):
        return _member(target, index, text)
    raise SourceError("", f"{text}: cannot index {kind(target)} with {kind(index)}")


def _call(node: Call, scope: Scope) -> Any:
    name = node.name.lower()
    if name == "if":
        _arity(node, 3, 3)
        condition = _known(node.args[0], scope)
        if not isinstance(condition, bool):
            raise ArgumentError("if", f"expects a bool condition, not {kind(condition)}")
        return evaluate(node.args[1] if condition else node.args[2], scope)
    if name == "coalesce":
        for arg in node.args:
            value = _known(arg, scope)
            if value is not None:
                return value
        return None
    unknown = deployment.not_here(name)
    if unknown is not None:
        return unknown
    args = [_known(arg, scope) for arg in node.args]
    if name in ("parameters", "variables"):
        _arity(node, 1, 1)
        if not isinstance(args[0], str):
            raise ArgumentError(node.name, "takes a name")
        return scope.parameter(args[0]) if name == "parameters" else scope.variable(args[0])
    if name == "copyindex":
        return _copy_index(node, args, scope)
    return deployment.call_function(
        scope.deployment, name, args, in_default=scope.in_default, shown=node.name,
        unknown=f"{node.text}: {node.name}() is not a template function known here",
    )  # fmt: skip


def _arity(node: Call, low: int, high: int) -> None:
    if not low <= len(node.args) <= high:
        raise ArgumentError(node.name, f"does not take {len(node.args)} arguments")


def _copy_index(node: Call, args: list[Any], scope: Scope) -> int:
    """copyIndex(), copyIndex(offset), copyIndex('loop'), copyIndex('loop', offset)."""
    _arity(node, 0, 2)
    loop = args[0] if args and isinstance(args[0], str) else None
    offset = args[-1] if args and is_int(args[-1]) else 0
    if (len(args) == 2 and loop is None) or (len(args) == 1 and not (loop or is_int(args[0]))):
        raise ArgumentError("copyIndex", "takes a loop name and/or an integer offset")
    return scope.copy_index(loop) + offset
