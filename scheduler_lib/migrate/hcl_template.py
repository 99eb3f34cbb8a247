"""HCL string templates: literal text, escapes (`\\n`, `\\"`, `\\uXXXX`), `$${` and `%%{`
for literal `${` and `%{`, and `${ expression }` interpolations (parsed by the caller's
expression parser, `hcl_expression`). Directives (`%{ if }`, `%{ for }`) are refused."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scheduler_lib.migrate.problems import SourceError

_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\"}


@dataclass(frozen=True)
class Lit:
    value: Any


@dataclass(frozen=True)
class Template:
    parts: tuple[Any, ...]  # str | Expr


def parse_template(body: str, expression: Callable[[str], Any]) -> Any:
    """A template's body (between the quotes): literal text, escapes and `${...}`."""
    parts: list[Any] = []
    literal, i = [], 0
    while i < len(body):
        char = body[i]
        if char == "\\" and i + 1 < len(body):
            code = body[i + 1]
            if code in "uU":
                size = 4 if code == "u" else 8
                literal.append(chr(int(body[i + 2 : i + 2 + size], 16)))
                i += 2 + size
                continue
            literal.append(_ESCAPES.get(code, "\\" + code))
            i += 2
        elif body.startswith("$${", i) or body.startswith("%%{", i):
            literal.append(body[i + 1 : i + 3])
            i += 3
        elif body.startswith("%{", i):
            raise SourceError(
                "", f"the template directive {body[i : i + 20]!r}... is not supported"
            )
        elif body.startswith("${", i):
            end = closing(body, i + 2)
            parts.append("".join(literal))
            literal = []
            parts.append(expression(body[i + 2 : end].strip().removeprefix("~").removesuffix("~")))
            i = end + 1
        else:
            literal.append(char)
            i += 1
    parts.append("".join(literal))
    kept = tuple(p for p in parts if p != "")
    if all(isinstance(p, str) for p in kept):
        return Lit("".join(kept))
    return Template(kept)


def closing(text: str, start: int) -> int:
    """The index of the `}` closing an interpolation that starts at `start`."""
    depth, i, quoted = 0, start, False
    while i < len(text):
        char = text[i]
        if quoted:
            if char == "\\":
                i += 1
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char == "{":
            depth += 1
        elif char == "}":
            if depth == 0:
                return i
            depth -= 1
        i += 1
    raise SourceError("", f"an interpolation is not closed in {text!r}")
