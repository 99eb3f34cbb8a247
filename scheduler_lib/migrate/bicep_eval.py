"""Evaluation of Bicep expressions from their tree-sitter parse tree.

Bicep compiles to ARM's expression language, so its functions are the same table
(`functions`, `deployment_functions`); this module adds Bicep's own syntax: operators
(`+ - * / %`, comparisons, `=~`, `&&`, `||`, `??`, `!`, `? :`), string interpolation,
object and array literals, `for` comprehensions, member and index access (`.?` and `[?]`
too), `sys.`/`az.` namespaced calls. What names mean (params, vars, resources, loop
variables) is the file's business (`bicep.BicepFile.symbol`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Protocol

from tree_sitter import Node

from scheduler_lib.migrate import dates, functions_data  # noqa: F401  (register their functions)
from scheduler_lib.migrate import deployment_functions as deployment
from scheduler_lib.migrate.arm_eval import find_unknown
from scheduler_lib.migrate.bicep_operators import operate
from scheduler_lib.migrate.functions import is_int, kind, to_string
from scheduler_lib.migrate.problems import Evaluated, SourceError, Unknown, Unresolved

_ESCAPE = re.compile(r"\\(u\{[0-9A-Fa-f]+\}|.)")
_SIMPLE = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", "'": "'", "$": "$"}


class Symbols(Protocol):
    @property
    def deployment(self) -> deployment.Deployment: ...

    def symbol(self, name: str, node: Node) -> Any: ...

    def is_resource(self, name: str) -> bool: ...

    def call(self, name: str, args: list[Any], node: Node) -> Any:
        """A call the file answers itself (`loadTextContent`, ...), or NotImplemented."""
        ...


def child(node: Node, name: str) -> Node:
    """A node's child by field name (the grammar guarantees it; a parse error would not
    reach here, `bicep._check_syntax` refuses it first)."""
    found = node.child_by_field_name(name)
    if found is None:
        raise SourceError("", f"{text(node)}: expected its {name}")
    return found


def text(node: Node) -> str:
    return (node.text or b"").decode()


def string_value(node: Node, interpolate: Callable[[Node], Any]) -> str:
    """A Bicep string literal with its escapes undone and its `${...}` evaluated."""
    raw = text(node)
    if raw.startswith("'''"):
        return raw[3:-3].removeprefix("\n")
    source = node.text or b""
    pieces, position = [], node.start_byte + 1
    for child in node.named_children:
        if child.type != "interpolation":
            continue
        opener = next(c for c in child.children if c.type == "${")
        dollar = opener.end_byte - 2
        pieces.append(_unescape(source[position - node.start_byte : dollar - node.start_byte]))
        expression = next(c for c in child.named_children)
        pieces.append(to_string(interpolate(expression)))
        position = child.end_byte
    pieces.append(_unescape(source[position - node.start_byte : len(source) - 1]))
    return "".join(pieces)


def _unescape(raw: bytes) -> str:
    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code.startswith("u{"):
            return chr(int(code[2:-1], 16))
        return _SIMPLE.get(code, match.group(0))

    return _ESCAPE.sub(one, raw.decode())


class Evaluator:
    """Evaluates expression nodes against a file's symbols, with loop variables in scope."""

    def __init__(self, symbols: Symbols) -> None:
        self.symbols = symbols
        self.locals: list[dict[str, Evaluated]] = []
        self.in_default = False  # a param's default: where utcNow() is allowed

    def known(self, node: Node) -> Any:
        value = self.evaluate(node)
        unknown = find_unknown(value)
        if unknown is not None:
            raise Unresolved("", text(node), unknown.reason, unknown.hint)
        return value

    def evaluate(self, node: Node) -> Any:
        value = self._evaluate(node)
        if isinstance(value, Unknown):
            raise Unresolved("", text(node), value.reason, value.hint)
        return value

    def _evaluate(self, node: Node) -> Any:
        kind_ = node.type
        if kind_ == "string":
            return string_value(node, self.known)
        if kind_ == "number":
            return int(text(node))
        if kind_ == "boolean":
            return text(node) == "true"
        if kind_ == "null":
            return None
        if kind_ == "parenthesized_expression":
            return self.evaluate(node.named_children[0])
        if kind_ == "array":
            return [self.evaluate(child) for child in node.named_children]
        if kind_ == "object":
            return {key: self.evaluate(value) for key, value in object_items(node)}
        if kind_ == "identifier":
            return self._name(text(node), node)
        if kind_ == "member_expression":
            owner, name = child(node, "object"), text(child(node, "property"))
            if self._deployed_state(owner, name):
                return Unknown(f"it reads the deployed state of the resource {text(owner)}")
            target = self.evaluate(owner)
            safe = any(c.type == ".?" for c in node.children)
            return member(target, name, text(node), safe=safe)
        if kind_ == "subscript_expression":
            return self._subscript(node)
        if kind_ == "call_expression":
            return self._call(node)
        if kind_ == "for_statement":
            return self.comprehension(node, self.evaluate)
        if kind_ in ("unary_expression", "binary_expression", "ternary_expression"):
            return operate(self, node)
        raise SourceError("", f"{text(node)}: Bicep's {kind_.replace('_', ' ')} is not supported")

    def _deployed_state(self, owner: Node, name: str) -> bool:
        """`res.properties`, `res.location`, ...: what Azure holds once `res` is deployed
        (only `name`, `id`, `type` and `apiVersion` are known before)."""
        symbol = text(owner)
        local = any(symbol in frame for frame in self.locals)
        known = name in ("name", "id", "type", "apiVersion")
        return (
            owner.type == "identifier"
            and not local
            and self.symbols.is_resource(symbol)
            and not known
        )

    def _name(self, name: str, node: Node) -> Any:
        for frame in reversed(self.locals):
            if name in frame:
                return frame[name]
        return self.symbols.symbol(name, node)

    def _subscript(self, node: Node) -> Any:
        target = self.evaluate(child(node, "object"))
        index = self.known(child(node, "index"))
        safe = any(c.type == "?" for c in node.children)
        if isinstance(target, list) and is_int(index):
            if 0 <= index < len(target):
                return target[index]
            if safe:
                return None
            raise SourceError("", f"{text(node)}: index {index} is outside the array")
        if isinstance(target, dict) and isinstance(index, str):
            return member(target, index, text(node), safe=safe)
        raise SourceError("", f"{text(node)}: cannot index {kind(target)} with {kind(index)}")

    def _call(self, node: Node) -> Any:
        function = node.child_by_field_name("function")
        assert function is not None
        arguments = node.child_by_field_name("arguments")
        arg_nodes = arguments.named_children if arguments is not None else []
        if function.type == "member_expression":
            owner = function.child_by_field_name("object")
            name = text(child(function, "property"))
            if owner is not None and text(owner) not in ("sys", "az"):
                self.evaluate(owner)  # a resource's own function: listKeys(), ...
                return Unknown("a resource function asks Azure for the deployed resource's state")
        else:
            name = text(function)
        lowered = name.lower()
        if lowered == "if":
            raise SourceError("", f"{text(node)}: Bicep writes conditions as a ? b : c")
        if lowered == "any":
            return self.evaluate(arg_nodes[0])
        unknown = deployment.not_here(name)
        if unknown is not None:
            return unknown
        args = [self.known(arg) for arg in arg_nodes]
        own = self.symbols.call(name, args, node)
        if own is not NotImplemented:
            return own
        return deployment.call_function(
            self.symbols.deployment, lowered, args, in_default=self.in_default, shown=name,
            unknown=f"{text(node)}: {name}() is not a function known here",
        )  # fmt: skip

    def comprehension(self, node: Node, body_value: Callable[[Node], Any]) -> list[Any]:
        """`[for x in xs: body]`, `[for (x, i) in xs: body]`; an `if` body filters."""
        item, index = loop_names(node)
        iterable = node.named_children[1 if item else 0]
        body = node.child_by_field_name("body")
        assert body is not None
        source = self.known(iterable)
        if not isinstance(source, list):
            raise SourceError("", f"{text(iterable)}: a for loop iterates an array")
        results = []
        for position, element in enumerate(source):
            self.locals.append({item: element, **({index: position} if index else {})})
            try:
                if body.type == "if_statement":
                    condition = self.known(body.named_children[0])
                    if condition is not True:
                        continue
                    results.append(body_value(body.named_children[1]))
                else:
                    results.append(body_value(body))
            finally:
                self.locals.pop()
        return results


def loop_names(node: Node) -> tuple[str, str | None]:
    parameters = next((c for c in node.children if c.type == "for_loop_parameters"), None)
    if parameters is None:
        initializer = node.child_by_field_name("initializer")
        return text(initializer) if initializer is not None else "", None
    item = next(c for c in parameters.children if c.type == "loop_variable")
    index = next((c for c in parameters.children if c.type == "loop_enumerator"), None)
    return text(item), text(index) if index is not None else None


def object_items(node: Node) -> list[tuple[str, Node]]:
    """The (key, value node) of an object literal (nested resource declarations left out)."""
    items = []
    for prop in node.named_children:
        if prop.type != "object_property" or prop.named_children[0].type == "resource_declaration":
            continue
        key_node, value_node = prop.named_children[0], prop.named_children[-1]
        key = (
            string_value(key_node, lambda n: text(n))
            if key_node.type == "string"
            else text(key_node)
        )
        items.append((key, value_node))
    return items


class ResourceRef(dict[str, Evaluated]):
    """A resource symbol's value: what is known before deployment (`name`, `id`, `type`,
    `apiVersion`); any other property is the deployed state, an `Unknown`."""

    @property
    def name(self) -> str:
        """Its name: a string (`bicep_resources._ref` refuses any other)."""
        return str(self["name"])


def member(target: Any, name: str, where: str, *, safe: bool = False) -> Any:
    if target is None and safe:
        return None
    if not isinstance(target, dict):
        raise SourceError("", f"{where}: {kind(target)} has no properties")
    for key, value in target.items():
        if key.lower() == name.lower():
            return value
    if isinstance(target, ResourceRef):
        return Unknown(f"it reads the deployed state of the resource {target.get('name')!r}")
    if safe:
        return None
    raise SourceError("", f"{where}: there is no property {name!r}")
