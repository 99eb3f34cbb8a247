"""Terraform (HCL 2) expressions, parsed: a tokenizer and a recursive descent.

`python-hcl2` parses the files and hands over each attribute's expression as text (a quoted
template `"...${x}..."` or `${expr}`); this reads that text. It covers what configurations of
scheduler jobs use: literals, templates with interpolation, `var.`/`local.`/resource
references with `.attr`, `[index]` and legacy `.0`, function calls, arithmetic, comparison,
logic, `c ? a : b`, tuples and objects. Template directives (`%{ if }`), `for` expressions and
splats are refused by name rather than read wrongly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, NoReturn

from scheduler_lib.migrate.hcl_template import Lit, closing, parse_template
from scheduler_lib.migrate.problems import SourceError


@dataclass(frozen=True)
class Ref:
    name: str  # a root name: var, local, a resource type, data, count, path, ...


@dataclass(frozen=True)
class Attr:
    target: Any
    name: str
    text: str


@dataclass(frozen=True)
class Idx:
    target: Any
    index: Any
    text: str


@dataclass(frozen=True)
class Func:
    name: str
    args: tuple[Any, ...]
    text: str


@dataclass(frozen=True)
class Op:
    operator: str
    operands: tuple[Any, ...]
    text: str


@dataclass(frozen=True)
class Items:
    items: tuple[Any, ...]


@dataclass(frozen=True)
class Obj:
    entries: tuple[tuple[Any, Any], ...]


_TOKEN = re.compile(
    r"\s*(?:(?P<number>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|(?P<name>[A-Za-z_][\w-]*)"
    r"|(?P<op>==|!=|<=|>=|&&|\|\||=>|\.\.\.|[-+*/%<>!?:.,()\[\]{}=])|(?P<quote>\"))"
)
_BINARY = (("||",), ("&&",), ("==", "!="), ("<", ">", "<=", ">="), ("+", "-"), ("*", "/", "%"))


def parse_value(raw: str) -> Any:
    """An attribute as python-hcl2 writes it: `${expr}` or a quoted template."""
    stripped = raw.strip()
    if stripped.startswith("${") and stripped.endswith("}"):  # python-hcl2's bare expression
        return parse_expression(stripped[2:-1])
    if stripped.startswith('"') and stripped.endswith('"'):
        return parse_template(stripped[1:-1], parse_expression)
    return parse_expression(stripped)


def parse_expression(text: str) -> Any:
    parser = _Parser(text)
    node = parser.expression()
    if not parser.at_end():
        parser.fail("unexpected text")
    return node


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.position = 0

    def fail(self, message: str) -> NoReturn:
        raise SourceError("", f"{message} in {self.text!r} at character {self.position + 1}")

    def at_end(self) -> bool:
        return self.text[self.position :].strip() == ""

    def peek(self) -> tuple[str, str] | None:
        match = _TOKEN.match(self.text, self.position)
        if match is None or match.end() == self.position or self.at_end():
            return None
        kind = match.lastgroup or ""
        return kind, match.group(kind)

    def take(self) -> tuple[str, str]:
        match = _TOKEN.match(self.text, self.position)
        if match is None or self.at_end():
            self.fail("the expression ends too early" if self.at_end() else "cannot read")
        self.position = match.end()
        kind = match.lastgroup or ""
        return kind, match.group(kind)

    def accept(self, *texts: str) -> str | None:
        token = self.peek()
        if token is not None and token[0] == "op" and token[1] in texts:
            self.take()
            return token[1]
        return None

    def expect(self, text: str) -> None:
        if self.accept(text) is None:
            self.fail(f"expected {text!r}")

    def expression(self) -> Any:
        start = self.position
        condition = self.binary(0)
        if self.accept("?"):
            yes = self.expression()
            self.expect(":")
            no = self.expression()
            return Op("?", (condition, yes, no), self.text[start : self.position].strip())
        return condition

    def binary(self, level: int) -> Any:
        if level == len(_BINARY):
            return self.unary()
        start = self.position
        node = self.binary(level + 1)
        while (operator := self.accept(*_BINARY[level])) is not None:
            right = self.binary(level + 1)
            node = Op(operator, (node, right), self.text[start : self.position].strip())
        return node

    def unary(self) -> Any:
        start = self.position
        operator = self.accept("!", "-")
        if operator is not None:
            operand = self.unary()
            return Op(operator, (operand,), self.text[start : self.position].strip())
        return self.postfix()

    def postfix(self) -> Any:
        start = self.position
        node = self.primary()
        while True:
            if self.accept("."):
                kind, name = self.take()
                if kind == "op" and name == "*":
                    self.fail("splat expressions are not supported")
                node = Attr(node, name, self.text[start : self.position].strip())
            elif self.accept("["):
                if self.accept("*"):
                    self.fail("splat expressions are not supported")
                index = self.expression()
                self.expect("]")
                node = Idx(node, index, self.text[start : self.position].strip())
            else:
                return node

    def primary(self) -> Any:
        start = self.position
        kind, token = self.take()
        if kind == "number":
            return Lit(float(token) if any(c in token for c in ".eE") else int(token))
        if kind == "quote":
            end = self._string_end()
            body = self.text[self.position : end]
            self.position = end + 1
            return parse_template(body, parse_expression)
        if kind == "name":
            if token in ("true", "false", "null"):
                return Lit({"true": True, "false": False, "null": None}[token])
            if token == "for":
                self.fail("for expressions are not supported")
            if self.accept("("):
                args = self._sequence(")")
                return Func(token, tuple(args), self.text[start : self.position].strip())
            return Ref(token)
        if token == "(":
            inner = self.expression()
            self.expect(")")
            return inner
        if token == "[":
            return Items(tuple(self._sequence("]")))
        if token == "{":
            return self._object()
        self.fail(f"unexpected {token!r}")

    def _sequence(self, close: str) -> list[Any]:
        items: list[Any] = []
        while not self.accept(close):
            items.append(self.expression())
            if self.accept("..."):
                self.fail("argument expansion (...) is not supported")
            if not self.accept(","):
                self.expect(close)
                break
        return items

    def _object(self) -> Obj:
        entries = []
        while not self.accept("}"):
            key = self.expression()
            if self.accept("=", ":") is None:
                self.fail("expected '=' in an object")
            entries.append((key, self.expression()))
            self.accept(",")
        return Obj(tuple(entries))

    def _string_end(self) -> int:
        i = self.position
        while i < len(self.text):
            if self.text[i] == "\\":
                i += 2
                continue
            if self.text.startswith("${", i):
                i = closing(self.text, i + 2) + 1
                continue
            if self.text[i] == '"':
                return i
            i += 1
        self.fail("a string is not closed")
