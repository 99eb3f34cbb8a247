"""From what the readers found to the bodies the API takes, and where they go.

What changes on the way, each with a `Note`: a job's read-only `status` is dropped; an
integer written as a string (`"maxJobCount": "10"`, which Azure read as 10) becomes the
integer; a TimeSpan `retryInterval` (`00:05:00`) becomes ISO 8601 (`PT5M`), read by the
model's own duration reader; `--collection` renames the one collection of the source (or
names the collection of jobs whose source does not say). Secrets the source only refers to
are `missing_secrets`. Nothing here validates: the API does, on the PUT (and the dry run
runs the same model code, `compare`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import isodate

from scheduler_lib.domain.json_values import JSON, JSONObject, as_object
from scheduler_lib.errors import ValidationError
from scheduler_lib.migrate.found import Found, FoundJob, MissingSecret, changed, dropped
from scheduler_lib.migrate.missing_secrets import NOTE_VERSION, apply_placeholders
from scheduler_lib.migrate.problems import Note, SourceError
from scheduler_lib.wire.durations import parse_time_to_live

API_VERSION = "2016-03-01"
_INTEGERS = frozenset({"maxjobcount", "maxjoboccurrence", "interval", "count", "retrycount",
                       "occurrence", "minutes", "hours", "monthdays", "months"})  # fmt: skip
#: Objects whose keys are the user's words, not the API's (a header may be called `count`).
_FREE_TEXT = frozenset({"headers", "custommessageproperties", "brokeredmessageproperties", "tags"})


@dataclass(frozen=True)
class Target:
    """Where the import writes (the options, and what the source says when they do not)."""

    subscription: str
    resource_group: str | None = None
    collection: str | None = None


@dataclass
class ImportedCollection:
    resource_group: str
    name: str
    body: JSONObject
    where: str
    notes: list[Note] = field(default_factory=list)
    api_version: str = API_VERSION


@dataclass
class ImportedJob:
    resource_group: str
    collection: str
    name: str
    body: JSONObject
    where: str
    api_version: str = API_VERSION
    notes: list[Note] = field(default_factory=list)
    missing: list[MissingSecret] = field(default_factory=list)

    @property
    def properties(self) -> JSONObject:
        """The job's properties (its body is `{"properties": ...}`, as `_job` builds it)."""
        return as_object(self.body.get("properties"))


@dataclass
class Plan:
    collections: list[ImportedCollection] = field(default_factory=list)
    jobs: list[ImportedJob] = field(default_factory=list)


def build_plan(found: Found, target: Target) -> Plan:
    plan = Plan()
    rename = target.collection if len(found.collections) == 1 else None
    if target.collection and len(found.collections) > 1:
        raise SourceError("--collection", "the source defines several job collections")
    renamed: dict[str, str] = {}
    for item in found.collections:
        notes = list(item.notes)
        name = item.name
        if rename and rename != name:
            notes.append(changed(f"{item.where}.name", f"{name} → {rename} (--collection)"))
            renamed[name.lower()] = rename
            name = rename
        body: JSONObject = {}
        if item.location is not None:
            body["location"] = item.location
        if item.tags is not None:
            body["tags"] = item.tags
        body["properties"] = _integers_in(copy.deepcopy(item.properties), "properties", notes)
        group = _group(target, item.resource_group, item.where)
        version = item.api_version or API_VERSION
        plan.collections.append(ImportedCollection(group, name, body, item.where, notes, version))
    for job in found.jobs:
        plan.jobs.append(_job(job, target, renamed))
    _unique(plan)
    return plan


def _group(target: Target, found: str | None, where: str) -> str:
    group = target.resource_group or found
    if not group:
        raise SourceError(where, "the resource group is not known", "give --resource-group")
    return group


def _job(job: FoundJob, target: Target, renamed: dict[str, str]) -> ImportedJob:
    notes = list(job.notes)
    collection = job.collection and renamed.get(job.collection.lower(), job.collection)
    if target.collection and collection and collection.lower() != target.collection.lower():
        notes.append(
            changed(
                f"{job.where}.name", f"collection {collection} → {target.collection} (--collection)"
            )
        )
    collection = target.collection or collection
    if not collection:
        raise SourceError(job.where, "the job's collection is not known", "give --collection")
    properties = copy.deepcopy(job.properties)
    for key in [k for k in properties if k.lower() == "status"]:
        properties.pop(key)
        notes.append(dropped(f"{job.where}.properties.{key}", "read-only: the scheduler keeps it"))
    properties = _integers_in(properties, "properties", notes)
    _retry_intervals(properties.get("action"), "properties.action", notes)
    version = job.api_version or API_VERSION
    if job.missing:
        properties, secret_notes = apply_placeholders(job, properties)
        notes += secret_notes
        version = NOTE_VERSION
    group = _group(target, job.resource_group, job.where)
    body: JSONObject = {"properties": properties}
    return ImportedJob(group, collection, job.name, body, job.where, version, notes, job.missing)


def _integers_in(value: JSONObject, path: str, notes: list[Note]) -> JSONObject:
    """Integer fields written as strings, read as Azure's deserializer read them."""
    return {
        k: v if k.lower() in _FREE_TEXT else _integers(v, f"{path}.{k}", notes, k.lower())
        for k, v in value.items()
    }


def _integers(value: JSON, path: str, notes: list[Note], key: str = "") -> JSON:
    if isinstance(value, dict):
        return _integers_in(value, path, notes)
    if isinstance(value, list):
        return [_integers(v, f"{path}[{i}]", notes, key) for i, v in enumerate(value)]
    if key in _INTEGERS and isinstance(value, str) and value.strip().lstrip("-").isdigit():
        notes.append(changed(path, f"the string {value!r} read as the integer {int(value)}"))
        return int(value)
    return value


def _retry_intervals(action: JSON, path: str, notes: list[Note]) -> None:
    if not isinstance(action, dict):
        return
    holders = [(action, path), (action.get("request"), f"{path}.request")]
    for holder, where in holders:
        policy = holder.get("retryPolicy") if isinstance(holder, dict) else None
        interval = policy.get("retryInterval") if isinstance(policy, dict) else None
        if isinstance(policy, dict) and isinstance(interval, str) and ":" in interval:
            try:
                iso = isodate.duration_isoformat(parse_time_to_live(interval, field=where))
            except ValidationError as error:
                raise SourceError(f"{where}.retryPolicy.retryInterval", error.message) from None
            policy["retryInterval"] = iso
            notes.append(
                changed(f"{where}.retryPolicy.retryInterval", f"TimeSpan {interval} → {iso}")
            )
    _retry_intervals(action.get("errorAction"), f"{path}.errorAction", notes)


def _unique(plan: Plan) -> None:
    seen: dict[tuple[str, ...], str] = {}
    for job in plan.jobs:
        key = (job.resource_group.lower(), job.collection.lower(), job.name.lower())
        if key in seen:
            raise SourceError(
                job.where, f"the job {job.collection}/{job.name} is also defined at {seen[key]}"
            )
        seen[key] = job.where
