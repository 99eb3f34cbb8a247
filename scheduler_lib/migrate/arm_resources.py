"""The scheduler resources of an ARM template: every `Microsoft.Scheduler/jobCollections`
and `.../jobs`, top-level or nested in a collection's `resources`, at any api-version, with
resource `copy` loops and `condition`s evaluated.

A job's name is `collection/job` at the top level; nested in a collection it is `job` (or
`collection/job`, the collection being its parent). Only the scheduler resources are
evaluated; the template's other resources are skipped unread, except a nested deployment
whose inline template holds scheduler resources, which is refused (import that template on
its own). `bicep build` output reads the same, `languageVersion` 2.0 included (resources as
an object keyed by symbolic name; `existing` ones are not created, so not imported).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from scheduler_lib.domain.json_values import JSON, JSONObject
from scheduler_lib.migrate.arm_template import MISSING, Template
from scheduler_lib.migrate.found import SECRET_KEYS, Found, FoundCollection, FoundJob, MissingSecret
from scheduler_lib.migrate.found import dropped as dropped_note
from scheduler_lib.migrate.problems import Note, SourceError, Unresolved

COLLECTION = "microsoft.scheduler/jobcollections"
JOB = "microsoft.scheduler/jobcollections/jobs"
#: Envelope keys of a template resource that only ARM reads (deployment order, loops, ...).
ARM_ONLY = frozenset({"type", "apiversion", "name", "dependson", "comments", "copy", "condition",
                      "resources", "metadata", "existing", "scope", "import"})  # fmt: skip


def read_resources(template: Template) -> Found:
    found = Found()
    _walk(template, template.document.get("resources"), "resources", None, found)
    return found


def _entries(resources: JSON, path: str) -> Iterator[tuple[str, str, JSONObject]]:
    """(where, type, resource) of each resource of a `resources` array (or object)."""
    items: Iterator[tuple[str, JSON]]
    if isinstance(resources, dict):  # languageVersion 2.0: keyed by symbolic name
        items = ((f"{path}.{name}", r) for name, r in resources.items())
    elif isinstance(resources, list):
        items = ((f"{path}[{i}]", r) for i, r in enumerate(resources))
    elif resources is None:
        return
    else:
        raise SourceError(path, "must be an array of resources")
    for where, resource in items:
        kind = resource.get("type") if isinstance(resource, dict) else None
        if not isinstance(resource, dict) or not isinstance(kind, str):
            raise SourceError(where, "a resource must be an object with a literal type")
        yield where, kind, resource


def _walk(template: Template, resources: JSON, path: str, parent: str | None, found: Found) -> None:
    for where, declared, resource in _entries(resources, path):
        kind = declared.lower()
        if parent is not None and kind == "jobs":
            kind = JOB
        if resource.get("existing") is True:
            continue
        if kind == COLLECTION and parent is None:
            for _ in _copies(template, resource, where):
                if _condition(template, resource, where):
                    _collection(template, resource, where, found)
        elif kind == JOB:
            for _ in _copies(template, resource, where):
                if _condition(template, resource, where):
                    found.jobs.append(_job(template, resource, where, parent))
        elif kind == "microsoft.resources/deployments":
            properties = resource.get("properties")
            inner = json.dumps(properties.get("template") if isinstance(properties, dict) else {})
            if "microsoft.scheduler" in inner.lower():
                raise SourceError(
                    where, "a nested deployment holds scheduler resources: import its template "
                    "on its own, with its parameters",
                )  # fmt: skip


def _copies(template: Template, resource: JSONObject, where: str) -> Iterator[None]:
    loop = resource.get("copy")
    if loop is None:
        yield
        return
    if not isinstance(loop, dict):
        raise SourceError(f"{where}.copy", "must be an object with name and count")
    name = loop.get("name")
    if name is not None and not isinstance(name, str):
        raise SourceError(f"{where}.copy.name", "must be a string")
    count = template.count(loop.get("count"), f"{where}.copy.count")
    for index in range(count):
        template.loops.append((name, index))
        try:
            yield
        finally:
            template.loops.pop()


def _condition(template: Template, resource: JSONObject, where: str) -> bool:
    if "condition" not in resource:
        return True
    value = template.value(resource["condition"], f"{where}.condition")
    if not isinstance(value, bool):
        raise SourceError(f"{where}.condition", "must be a bool")
    return value


def _name(template: Template, resource: JSONObject, where: str) -> str:
    name = template.value(resource.get("name"), f"{where}.name")
    if not isinstance(name, str) or not name:
        raise SourceError(f"{where}.name", "must be a non-empty string")
    return name


def _extra(resource: JSONObject, where: str, own: tuple[str, ...]) -> list[Note]:
    return [
        dropped_note(f"{where}.{key}", "not part of the 2016-03-01 API")
        for key in resource
        if key.lower() not in ARM_ONLY and key not in own
    ]


def _collection(template: Template, resource: JSONObject, where: str, found: Found) -> None:
    name = _name(template, resource, where)
    if "/" in name:
        raise SourceError(f"{where}.name", f"{name!r}: a job collection's name has no '/'")
    collection = FoundCollection(name=name, where=where)
    if "location" in resource:
        collection.location = template.value(resource["location"], f"{where}.location")
    if "tags" in resource:
        collection.tags = template.value(resource["tags"], f"{where}.tags")
    collection.properties = template.value(resource.get("properties") or {}, f"{where}.properties")
    collection.notes = _extra(resource, where, ("location", "tags", "properties"))
    found.collections.append(collection)
    _walk(template, resource.get("resources"), f"{where}.resources", name, found)


def _job(template: Template, resource: JSONObject, where: str, parent: str | None) -> FoundJob:
    name = _name(template, resource, where)
    parts = name.split("/")
    if parent is None and len(parts) != 2:
        raise SourceError(f"{where}.name", f"{name!r}: a job's name is 'collection/job'")
    foreign = len(parts) == 2 and parent is not None and parts[0].lower() != parent.lower()
    if parent is not None and (len(parts) > 2 or foreign):
        raise SourceError(f"{where}.name", f"{name!r} does not name a job of {parent!r}")
    job = FoundJob(collection=parent or parts[0], name=parts[-1], where=where)
    base = f"{where}.properties"

    def missing_secret(path: str, error: Unresolved) -> Any:
        if path.rsplit(".", 1)[-1].lower() not in SECRET_KEYS:
            raise error
        field = "properties" + path[len(base) :]
        job.missing.append(MissingSecret(field, error.expression, error.reason))
        return MISSING

    job.properties = template.value(resource.get("properties") or {}, base, missing_secret)
    job.notes = [
        dropped_note(
            f"{where}.{key}",
            "a job has no location or tags in the API"
            if key.lower() in ("location", "tags")
            else "not part of the 2016-03-01 API",
        )
        for key in resource
        if key.lower() not in ARM_ONLY and key != "properties"
    ]
    return job
