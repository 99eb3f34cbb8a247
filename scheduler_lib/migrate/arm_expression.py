"""The ARM template expression language, parsed: a tokenizer and a recursive descent.

A template string is an expression when it starts with `[` and ends with `]`; one starting
with `[[` (and ending with `]`) is the literal that follows the first bracket. Inside:

    expression := primary ( "." name | "?." name | "[" expression "]" )*
    primary    := 'string' | number | name "(" [ expression ("," expression)* ] ")"

Strings are in single quotes, a quote inside doubled (`'it''s'`). There are no operators:
arithmetic and logic are functions (`add`, `and`, `if`, ...). Each node keeps its source
text, so that an expression that cannot be evaluated is named as the author wrote it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from scheduler_lib.migrate.problems import SourceError


@dataclass(frozen=True)
class Literal:
    value: Any
    text: str


@dataclass(frozen=True)
class Call:
    name: str
    args: tuple[Node, ...]
    text: str


@dataclass(frozen=True)
class Member:
    target: Node
    name: str
    text: str


@dataclass(frozen=True)
class Index:
    target: Node
    index: Node
    text: str


Node = Literal | Call | Member | Index

_TOKEN = re.compile(
    r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<number>-?\d+(?:\.\d+)?)"
    r"|(?P<name>[A-Za-z_$][\w$]*)|(?P<punct>\?\.|[()\[\],.]))"
)


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    start: int


def template_value(value: str) -> str | Node:
    """A template string as written: the literal string, or the parsed expression."""
    if value.startswith("[[") and value.endswith("]"):
        return value[1:]
    if value.startswith("[") and value.endswith("]"):
        return parse(value[1:-1])
    return value


def parse(text: str) -> Node:
    """The expression inside `[...]`; SourceError naming what is wrong and where."""
    parser = _Parser(text, _tokens(text))
    node = parser.expression()
    if parser.position < len(parser.tokens):
        parser.fail("unexpected text", parser.tokens[parser.position].start)
    return node


def _tokens(text: str) -> list[_Token]:
    tokens, position = [], 0
    while position < len(text):
        if text[position:].strip() == "":
            break
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            start = len(text) - len(text[position:].lstrip())
            raise SourceError("", f"cannot read the expression [{text}] at character {start + 1}")
        kind = match.lastgroup or ""
        tokens.append(_Token(kind, match.group(kind), match.start(kind)))
        position = match.end()
    return tokens


class _Parser:
    def __init__(self, text: str, tokens: list[_Token]) -> None:
        self.text = text
        self.tokens = tokens
        self.position = 0

    def fail(self, message: str, at: int | None = None) -> None:
        where = len(self.text) if at is None else at
        raise SourceError("", f"{message} in the expression [{self.text}] at character {where + 1}")

    def peek(self, text: str) -> bool:
        return self.position < len(self.tokens) and self.tokens[self.position].text == text

    def take(self) -> _Token:
        if self.position >= len(self.tokens):
            self.fail("the expression ends too early")
        token = self.tokens[self.position]
        self.position += 1
        return token

    def expect(self, text: str) -> _Token:
        token = self.take()
        if token.text != text:
            self.fail(f"expected {text!r}, found {token.text!r}", token.start)
        return token

    def span(self, start: int) -> str:
        """The source text from `start` to the end of the last token taken."""
        last = self.tokens[self.position - 1]
        return self.text[start : last.start + len(last.text)].strip()

    def expression(self) -> Node:
        start = self.tokens[self.position].start if self.position < len(self.tokens) else 0
        node = self.primary()
        while True:
            if self.peek(".") or self.peek("?."):
                self.take()
                name = self.take()
                if name.kind != "name":
                    self.fail("expected a property name", name.start)
                node = Member(node, name.text, self.span(start))
            elif self.peek("["):
                self.take()
                index = self.expression()
                self.expect("]")
                node = Index(node, index, self.span(start))
            else:
                return node

    def primary(self) -> Node:
        token = self.take()
        if token.kind == "string":
            return Literal(token.text[1:-1].replace("''", "'"), token.text)
        if token.kind == "number":
            value = float(token.text) if "." in token.text else int(token.text)
            return Literal(value, token.text)
        if token.kind != "name":
            self.fail(f"unexpected {token.text!r}", token.start)
        self.expect("(")
        args: list[Node] = []
        if not self.peek(")"):
            args.append(self.expression())
            while self.peek(","):
                self.take()
                args.append(self.expression())
        self.expect(")")
        return Call(token.text, tuple(args), self.span(token.start))
