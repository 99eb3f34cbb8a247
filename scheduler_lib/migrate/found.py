"""What a reader finds in a source: job collections and jobs, with their properties in the
API's JSON shape and what happened on the way (notes, secrets the source lacks).

Every reader (ARM, Bicep, Terraform) produces these; `convert` turns them into the bodies
the API takes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scheduler_lib.domain.json_values import JSONObject
from scheduler_lib.migrate.problems import Note, NoteKind

#: The keys that hold secrets in a job's properties (`wire/secrets.py` names the same).
SECRET_KEYS = frozenset({"password", "pfx", "secret", "sastoken", "saskey"})


@dataclass(frozen=True)
class MissingSecret:
    """A secret the source only refers to: where it goes in the job, and why it is missing."""

    field: str  # JSON path in the job body, e.g. properties.action.request.authentication.password
    source: str  # where the source refers to it
    reason: str

    def sentence(self) -> str:
        return f"{self.field} (the source's {self.source}: {self.reason})"


@dataclass
class FoundCollection:
    name: str
    where: str  # the resource in the source, for messages
    location: Any = None
    tags: Any = None
    properties: JSONObject = field(default_factory=dict)
    resource_group: str | None = None
    notes: list[Note] = field(default_factory=list)
    #: The api-version its properties are written in (None: 2016-03-01, as templates are;
    #: an export bundle's are 2026-12-01).
    api_version: str | None = None


@dataclass
class FoundJob:
    collection: str | None  # None: the source does not say (--collection gives it)
    name: str
    where: str
    properties: JSONObject = field(default_factory=dict)
    resource_group: str | None = None
    notes: list[Note] = field(default_factory=list)
    missing: list[MissingSecret] = field(default_factory=list)
    api_version: str | None = None  # as FoundCollection's


@dataclass
class Found:
    """All a source holds (files of one kind read together)."""

    collections: list[FoundCollection] = field(default_factory=list)
    jobs: list[FoundJob] = field(default_factory=list)

    def extend(self, other: Found) -> None:
        self.collections.extend(other.collections)
        self.jobs.extend(other.jobs)


def dropped(where: str, message: str) -> Note:
    return Note(NoteKind.DROPPED, where, message)


def changed(where: str, message: str) -> Note:
    return Note(NoteKind.CHANGED, where, message)


def defaulted(where: str, message: str) -> Note:
    return Note(NoteKind.DEFAULTED, where, message)
