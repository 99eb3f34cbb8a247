"""Evaluation of parsed Terraform expressions (`hcl_expression`) in a module
(`terraform.Module`): references, templates, operators and function calls."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scheduler_lib.migrate.arm_eval import find_unknown
from scheduler_lib.migrate.confine import shown
from scheduler_lib.migrate.functions import ArgumentError, is_int, kind
from scheduler_lib.migrate.hcl_expression import Attr, Func, Idx, Items, Obj, Op, Ref
from scheduler_lib.migrate.hcl_template import Lit, Template
from scheduler_lib.migrate.problems import SourceError, Unknown, Unresolved
from scheduler_lib.migrate.terraform_functions import FUNCTIONS, call_file, tf_string, timestamp

if TYPE_CHECKING:
    from scheduler_lib.migrate.terraform import Module


class TerraformEvaluator:
    def __init__(self, module: Module) -> None:
        self.module = module
        self.counts: list[int | None] = []  # count.index of the resources being evaluated

    def known(self, node: Any) -> Any:
        value = self.evaluate(node)
        unknown = find_unknown(value)
        if unknown is not None:
            raise Unresolved("", describe(node), unknown.reason, unknown.hint)
        return value

    def evaluate(self, node: Any) -> Any:
        value = self._evaluate(node)
        if isinstance(value, Unknown):
            raise Unresolved("", describe(node), value.reason, value.hint)
        return value

    def _evaluate(self, node: Any) -> Any:
        if isinstance(node, Lit):
            return node.value
        if isinstance(node, Template):
            if len(node.parts) == 1 and not isinstance(node.parts[0], str):
                return self.evaluate(node.parts[0])  # "${x}" keeps x's type
            return "".join(
                p if isinstance(p, str) else tf_string(self.known(p)) for p in node.parts
            )
        if isinstance(node, Items):
            return [self.evaluate(item) for item in node.items]
        if isinstance(node, Obj):
            return {
                key.name if isinstance(key, Ref) else tf_string(self.known(key)): self.evaluate(
                    value
                )
                for key, value in node.entries
            }
        if isinstance(node, Attr | Idx):
            return self._traversal(node)
        if isinstance(node, Ref):
            raise SourceError(
                "", f"{node.name} alone is not a value (did you mean var.{node.name}?)"
            )
        if isinstance(node, Func):
            return self._call(node)
        if isinstance(node, Op):
            return self._operate(node)
        raise SourceError("", f"cannot evaluate {node!r}")

    def _traversal(self, node: Attr | Idx) -> Any:
        chain = _chain(node)
        root = chain[0]
        module = self.module
        if root == "var" and len(chain) >= 2:
            return self._rest(module.variable(str(chain[1])), chain[2:], node)
        if root == "local" and len(chain) >= 2:
            return self._rest(module.local(str(chain[1])), chain[2:], node)
        if root == "count" and chain[1:2] == ["index"]:
            if not self.counts or self.counts[-1] is None:
                raise SourceError("", "count.index is used in a resource without count")
            return self.counts[-1]
        if root == "path" and chain[1:2] in (["module"], ["root"], ["cwd"]):
            return shown(module.directory)
        if root == "data":
            return Unknown("a data source is read from Azure when Terraform plans")
        if root in ("terraform", "each", "self"):
            return Unknown(f"{root}.* is only known to Terraform while it runs")
        if len(chain) >= 2 and "_" in str(root):
            index = chain[2] if len(chain) > 2 and is_int(chain[2]) else None
            rest = chain[3:] if index is not None else chain[2:]
            if not rest:
                return Unknown(f"{root}.{chain[1]} as a whole is the resource Azure creates")
            value = module.argument(str(root), str(chain[1]), str(rest[0]), index)
            return self._rest(value, rest[1:], node)
        raise SourceError("", f"{describe(node)} refers to nothing in the module")

    def _rest(self, value: Any, rest: list[Any], node: Any) -> Any:
        for step in rest:
            if isinstance(value, Unknown):
                return value
            if isinstance(value, dict) and str(step) in value:
                value = value[str(step)]
            elif isinstance(value, list) and is_int(step) and 0 <= step < len(value):
                value = value[step]
            else:
                raise SourceError("", f"{describe(node)}: {kind(value)} has no element {step!r}")
        return value

    def _call(self, node: Func) -> Any:
        args = [self.known(arg) for arg in node.args]
        if node.name in ("file", "filebase64"):
            return call_file(node.name, args, self.module.directory)
        if node.name == "timestamp":
            return timestamp(self.module.deployment.import_time)
        function = FUNCTIONS.get(node.name)
        if function is None:
            raise SourceError("", f"{node.text}: {node.name}() is not a function known here")
        try:
            return function(*args)
        except (TypeError, ValueError, IndexError, KeyError) as error:
            raise ArgumentError(node.name, f"cannot take these arguments ({error})") from None

    def _operate(self, node: Op) -> Any:
        operator, operands = node.operator, node.operands
        if operator == "?":
            condition = self.known(operands[0])
            if not isinstance(condition, bool):
                raise ArgumentError("?", f"the condition must be a bool, not {kind(condition)}")
            return self.evaluate(operands[1] if condition else operands[2])
        if operator in ("&&", "||"):
            first = self.known(operands[0])
            if first is (operator == "||"):
                return first
            return self.known(operands[1])
        values = [self.known(operand) for operand in operands]
        if operator == "!":
            return not values[0]
        if len(values) == 1:  # unary minus
            return -values[0]
        a, b = values
        try:
            return _BINARY[operator](a, b)
        except TypeError:
            raise ArgumentError(operator, f"cannot apply to {kind(a)} and {kind(b)}") from None


_BINARY = {
    "+": lambda a, b: _number(a) + _number(b),
    "-": lambda a, b: _number(a) - _number(b),
    "*": lambda a, b: _number(a) * _number(b),
    "/": lambda a, b: _number(a) / _number(b),
    "%": lambda a, b: _number(a) % _number(b),
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    ">": lambda a, b: a > b,
    "<=": lambda a, b: a <= b,
    ">=": lambda a, b: a >= b,
}


def _number(value: Any) -> Any:
    """An operand of arithmetic: Terraform converts a numeric string to a number."""
    if isinstance(value, str):
        return float(value) if "." in value else int(value)
    return value


def _chain(node: Any) -> list[Any]:
    """`a.b[0].c` as ['a', 'b', 0, 'c'] (literal indexes and legacy `.0` as ints)."""
    if isinstance(node, Ref):
        return [node.name]
    if isinstance(node, Attr):
        return [*_chain(node.target), int(node.name) if node.name.isdigit() else node.name]
    if isinstance(node, Idx) and isinstance(node.index, Lit):
        return [*_chain(node.target), node.index.value]
    raise SourceError("", f"{describe(node)}: only literal indexes are supported in references")


def describe(node: Any) -> str:
    """The source text of a node, for messages."""
    if isinstance(node, Attr | Idx | Func | Op):
        return node.text
    if isinstance(node, Ref):
        return node.name
    if isinstance(node, Lit):
        return repr(node.value)
    return "the expression"
