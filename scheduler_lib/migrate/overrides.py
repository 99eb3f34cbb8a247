"""`--set NAME=VALUE`: values the source does not have, given on the command line.

A NAME is either a parameter (ARM and Bicep `param`, Terraform `variable`), whose declared
type decides how VALUE is read, or the path of a value in the source as the import's own
messages print it (`resources[2].properties.action.request.uri`,
`azurerm_scheduler_job.web.action_web.url`), which replaces whatever the source has there.
`NAME:=JSON` gives a JSON value (a number, an object) to a path. Every --set must be used:
one that matches nothing is an error, not silently ignored (a typo would otherwise import
the source's value).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from scheduler_lib.domain.json_values import JSON, JSONObject
from scheduler_lib.migrate.problems import SourceError


class Overrides:
    """The --set values, and which of them the import used."""

    def __init__(self, assignments: Iterable[str] = ()) -> None:
        self.values: JSONObject = {}
        self.raw: dict[str, str] = {}
        self.used: set[str] = set()
        for assignment in assignments:
            name, json_value, text = _split(assignment)
            if name in self.raw:
                raise SourceError("--set", f"{name} is given twice")
            self.raw[name] = text
            self.values[name] = _json(name, text) if json_value else text

    def parameter(self, name: str) -> str | None:
        """The raw text given for a parameter `name` (case-insensitive, as ARM names are)."""
        for key, text in self.raw.items():
            if key.lower() == name.lower():
                self.used.add(key)
                return text
        return None

    def at(self, path: str) -> tuple[bool, JSON]:
        """(True, value) when a --set names this path of the source."""
        if path in self.values:
            self.used.add(path)
            return True, self.values[path]
        return False, None

    def check_all_used(self) -> None:
        unused = sorted(set(self.raw) - self.used)
        if unused:
            raise SourceError(
                "--set",
                f"{', '.join(unused)} matches no parameter and no path of the source "
                "(the paths are the ones the import's messages print)",
            )


def _split(assignment: str) -> tuple[str, bool, str]:
    name, equals, text = assignment.partition("=")
    if not equals or not name:
        raise SourceError("--set", f"{assignment!r} is not NAME=VALUE")
    if name.endswith(":"):
        return name[:-1], True, text
    return name, False, text


def _json(name: str, text: str) -> JSON:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise SourceError("--set", f"{name}:= takes JSON ({error.msg})") from None


def typed(name: str, declared: str, text: str) -> JSON:
    """A parameter's --set text read as its declared type (string, int, bool, object,
    array; secure variants alike)."""
    kind = declared.lower().removeprefix("secure")
    if kind in ("string", "", "any"):
        return text
    try:
        if kind == "int" or kind == "number":
            return int(text)
        if kind == "bool":
            if text.lower() not in ("true", "false"):
                raise ValueError
            return text.lower() == "true"
        return json.loads(text)
    except ValueError:
        raise SourceError("--set", f"{name} is declared {declared}; {text!r} is not one") from None
