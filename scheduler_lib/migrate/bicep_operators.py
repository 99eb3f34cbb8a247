"""Bicep's operators, as Bicep compiles them to ARM functions: `+ - * / %` on integers
(`/` and `%` truncate toward zero), `==`/`!=` (same type and value, strings
case-sensitive), `=~`/`!~` (strings, ignoring case), `< <= > >=` (two ints or two strings),
`&&`, `||`, `??`, `!`, unary `-`, and `c ? a : b`. The logical ones and `??` and `? :`
evaluate only the operands they need.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tree_sitter import Node

from scheduler_lib.migrate.functions import FUNCTIONS, ArgumentError, int_arg, kind

if TYPE_CHECKING:
    from scheduler_lib.migrate.bicep_eval import Evaluator

_ARITHMETIC = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod"}
_COMPARISON = {"<": "less", "<=": "lessOrEquals", ">": "greater", ">=": "greaterOrEquals"}


def operate(evaluator: Evaluator, node: Node) -> Any:
    if node.type == "ternary_expression":
        condition = _bool("?", evaluator.known(_field(node, "condition")))
        return evaluator.evaluate(_field(node, "consequence" if condition else "alternative"))
    operator = (_field(node, "operator").text or b"").decode()
    if node.type == "unary_expression":
        value = evaluator.known(_field(node, "argument"))
        return not _bool("!", value) if operator == "!" else -int_arg("-", value)
    left = _field(node, "left")
    right = _field(node, "right")
    if operator in ("&&", "||"):
        first = _bool(operator, evaluator.known(left))
        if first == (operator == "||"):
            return first
        return _bool(operator, evaluator.known(right))
    if operator == "??":
        value = evaluator.known(left)
        return value if value is not None else evaluator.known(right)
    a, b = evaluator.known(left), evaluator.known(right)
    if operator in _ARITHMETIC:
        return FUNCTIONS[_ARITHMETIC[operator]](a, b)
    if operator in _COMPARISON:
        return FUNCTIONS[_COMPARISON[operator].lower()](a, b)
    if operator in ("==", "!="):
        return FUNCTIONS["equals"](a, b) == (operator == "==")
    if operator in ("=~", "!~"):
        if not isinstance(a, str) or not isinstance(b, str):
            raise ArgumentError(operator, f"compares strings, not {kind(a)} and {kind(b)}")
        return (a.lower() == b.lower()) == (operator == "=~")
    raise ArgumentError(operator, "is not an operator known here")


def _field(node: Node, name: str) -> Node:
    child = node.child_by_field_name(name)
    if child is None:
        raise ArgumentError(node.type, f"has no {name}")
    return child


def _bool(operator: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ArgumentError(operator, f"expects a bool, not {kind(value)}")
    return value
