"""What an import says about its source: refusals, values it cannot know, and notes.

An import never guesses. A value that cannot be computed here (a deployed resource's
property, a key that only Azure can list, a parameter nobody gave) is an `Unresolved`: it
names the expression, where it is in the source, and how to supply it (`--set`). A source
that is wrong in itself is a `SourceError`. What the import changes on the way (a field
dropped, a TimeSpan rewritten, a default filled in) is a `Note`, printed before anything is
written.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TypeAlias

from scheduler_lib.domain.json_values import JSON


class SourceError(ValueError):
    """The source cannot be imported as it stands: `where` is its path in the source (a JSON
    path in a template, `resource.name.field` in Bicep or Terraform), `hint` how to fix it."""

    def __init__(self, where: str, message: str, hint: str | None = None) -> None:
        self.where = where
        self.detail = message
        self.hint = hint
        text = f"{where}: {message}" if where else message
        super().__init__(f"{text} ({hint})" if hint else text)

    def at(self, where: str) -> SourceError:
        """The same error located at `where`, when it does not say where it is yet (an
        expression's evaluator knows the expression, its caller the path)."""
        return self if self.where else SourceError(where, self.detail, self.hint)


class Unresolved(SourceError):
    """A value the source only refers to: known at deployment time in Azure, not here.

    `expression` is the source text that could not be evaluated. In a secret's place (a
    password, a pfx, a SAS token or key) it makes the job import Disabled instead of failing
    (`missing_secrets`); anywhere else it refuses the import."""

    def __init__(self, where: str, expression: str, reason: str, hint: str | None = None) -> None:
        self.expression = expression
        self.reason = reason
        super().__init__(where, f"{expression!s} cannot be evaluated here: {reason}", hint)

    def at(self, where: str) -> Unresolved:
        if self.where:
            return self
        hint = f"{self.hint}, or {set_hint(where)}" if self.hint else set_hint(where)
        return Unresolved(where, self.expression, self.reason, hint)


def parameter_hint(name: str, error: Unresolved | None = None) -> str:
    """How to give a parameter that has no value (and what its default needed, if that is
    what failed: `--location`, `--import-time`)."""
    hint = f"give it in --parameters FILE or with --set {name}=VALUE"
    inner = (error.hint or "").split(", or give its value with --set")[0] if error else ""
    return f"{hint}, or {inner}" if inner and not inner.startswith("give its value") else hint


def set_hint(where: str) -> str:
    """How to give a value the source does not have: the override of that very path."""
    return f"give its value with --set '{where}=VALUE'"


class NoteKind(StrEnum):
    DROPPED = "dropped"  # in the source, not in the 2016-03-01 API: left out
    CHANGED = "changed"  # rewritten to the form the API takes (same meaning)
    DEFAULTED = "defaulted"  # not in the source; the source tool's default is written out
    MISSING_SECRET = "missing secret"  # the job is imported Disabled until it is given


@dataclass(frozen=True)
class Note:
    """One thing the import did to a resource on the way, shown before anything is written."""

    kind: NoteKind
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.where}: {self.message}"


@dataclass(frozen=True)
class Unknown:
    """A value an evaluator holds without knowing it (`resourceGroup().tags`, a deployed
    resource's property): harmless until something reads it, then an `Unresolved` naming
    the expression that read it."""

    reason: str
    hint: str | None = None


#: What an evaluator computes from a source: JSON (what `--set` or a parameters file gives)
#: in which any part may be an `Unknown` (found out when something reads it). What the
#: readers hand on (`found`) is plain JSON.
Evaluated: TypeAlias = "JSON | Unknown | list[Evaluated] | dict[str, Evaluated]"
