"""The one place validation and output consult the extension catalog with a request's version.

Normalizers ask `names(location, version)` for the extra keys an object may have and
`read(location, source, path, version)` for their validated values; a key the version does
not have stays unknown, so a 2016-03-01 request gets the usual 400 "is not a known property"
naming it. Values are stored in the definition's JSON at their location, under their wire
name, so a definition stored before extensions existed reads as one without any.

`older_form` is what an older version shows (and what its PATCH is validated against):
the definition without the properties that version lacks.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from scheduler_lib.domain import JobRecord
from scheduler_lib.wire import readers
from scheduler_lib.wire.extension_catalog import CATALOG
from scheduler_lib.wire.versions import (
    ApiVersion,
    ExtensionChoice,
    ExtensionProperty,
    ExtensionStatus,
    Location,
)


def properties_at(
    location: Location, version: ApiVersion, *, error_action: bool = False
) -> tuple[ExtensionProperty, ...]:
    """The extension properties `version` has at `location` (in an errorAction: those that
    apply there)."""
    return tuple(
        prop
        for prop in CATALOG.properties
        if prop.location == location
        and version.has(prop.since)
        and (prop.error_action or not error_action)
    )


def names(
    location: Location, version: ApiVersion, *, error_action: bool = False
) -> tuple[str, ...]:
    """The extra keys an object at `location` may have in a request of `version`."""
    return tuple(prop.name for prop in properties_at(location, version, error_action=error_action))


def read(
    location: Location,
    source: dict[str, Any],
    path: str,
    version: ApiVersion,
    *,
    error_action: bool = False,
) -> dict[str, Any]:
    """The validated stored values of the extension properties given (non-null) in
    `source`, an object whose keys `readers.keys` already made canonical (a property's
    `default` when it is left out)."""
    result: dict[str, Any] = {}
    for prop in properties_at(location, version, error_action=error_action):
        if source.get(prop.name) is not None:
            result[prop.name] = prop.validate(source[prop.name], readers.join(path, prop.name))
        elif prop.default is not None:
            result[prop.name] = prop.default
    return result


@dataclass(frozen=True)
class Scope:
    """The request's version and whether the object is inside an errorAction: what decides
    which extension properties an action's objects may have."""

    version: ApiVersion
    error_action: bool = False

    def names(self, location: Location) -> tuple[str, ...]:
        return names(location, self.version, error_action=self.error_action)

    def read(self, location: Location, source: dict[str, Any], path: str) -> dict[str, Any]:
        return read(location, source, path, self.version, error_action=self.error_action)


def choices(
    location: Location, field: str, base: tuple[str, ...], version: ApiVersion
) -> tuple[str, ...]:
    """The values an enum at `location`.`field` takes in `version`: `base` and the
    extension choices the version has."""
    extra = tuple(
        choice.value
        for choice in CATALOG.choices
        if choice.location == location and choice.field == field and version.has(choice.since)
    )
    return base + extra


def cross_check(definition: dict[str, Any], path: str, version: ApiVersion) -> None:
    """The rules of present extension properties that involve the rest of the definition."""
    for location in Location:
        for container, error_action in _containers(definition, location):
            for prop in properties_at(location, version, error_action=error_action):
                if prop.cross_check is not None and container.get(prop.name) is not None:
                    where = _where(path, location, error_action)
                    prop.cross_check(
                        definition, container[prop.name], readers.join(where, prop.name)
                    )


def _where(path: str, location: Location, error_action: bool) -> str:
    """The wire path of the object at `location` (in the errorAction when `error_action`)."""
    if not location.value:
        return path
    inner = location.value
    if error_action:
        inner = inner.replace("action", "action.errorAction", 1)
    return readers.join(path, inner)


def older_form(definition: dict[str, Any], version: ApiVersion) -> dict[str, Any]:
    """A copy of a job definition (or request properties) as `version` knows it: without
    the extension properties it lacks, an extension choice shown as its older value."""
    result = copy.deepcopy(definition)
    for location in Location:
        for container, _ in _containers(result, location):
            _strip(container, location, version)
    return result


def collection_older_form(properties: dict[str, Any], version: ApiVersion) -> dict[str, Any]:
    """Stored collection properties as `version` knows them."""
    result = dict(properties)
    _strip(result, Location.COLLECTION, version)
    return result


def collection_names() -> tuple[str, ...]:
    """Every collection extension property a stored collection may hold (any version)."""
    return tuple(p.name for p in CATALOG.properties if p.location == Location.COLLECTION)


def status_of(record: JobRecord, version: ApiVersion) -> dict[str, Any]:
    """The extension properties of a job's `status` that `version` returns."""
    result: dict[str, Any] = {}
    for status in statuses(version):
        value = status.read(record)
        if value is not None:
            result[status.name] = value
    return result


def statuses(version: ApiVersion) -> tuple[ExtensionStatus, ...]:
    return tuple(status for status in CATALOG.statuses if version.has(status.since))


def all_choices() -> tuple[ExtensionChoice, ...]:
    return CATALOG.choices


def _strip(container: dict[str, Any], location: Location, version: ApiVersion) -> None:
    for prop in CATALOG.properties:
        if prop.location == location and not version.has(prop.since):
            container.pop(prop.name, None)
    for choice in CATALOG.choices:
        older = choice.location == location and not version.has(choice.since)
        if older and container.get(choice.field) == choice.value:
            container[choice.field] = choice.shown_to_older


def _containers(
    definition: dict[str, Any], location: Location
) -> Iterator[tuple[dict[str, Any], bool]]:
    """The objects of a job definition at `location`: (object, inside an errorAction)."""
    if location in (Location.JOB_STATUS, Location.COLLECTION):
        return
    if location == Location.JOB:
        yield definition, False
        return
    first, *rest = location.value.split(".")
    top = definition.get(first)
    if not isinstance(top, dict):
        return
    if first != "action":
        yield top, False
        return
    for action, in_error in ((top, False), (top.get("errorAction"), True)):
        target = action
        for key in rest:
            target = target.get(key) if isinstance(target, dict) else None
        if isinstance(target, dict):
            yield target, in_error
