"""The API's own validation of an imported body, run here, and its comparison with what the
scheduler holds.

No second validator: `check_job` and `check_collection` call the model functions the API's
PUT calls (`jobs.parse_job`, `secrets.finalize`, `jobs.check_size`,
`collections.normalize_body` and `complete`), so a dry run shows the same 400 messages. What
only the server can judge (its quotas, its egress and identity settings, an existing job's
stored secrets) is judged by the PUT itself.

The comparison is made in the canonical form, the one GET returns in api-version
`COMPARE_VERSION` (2026-12-01: enums and durations as the spec writes them, whatever the
source's spelling; 2016-03-01 answers echo the client's own spelling), rendered here by the
API's own `dialect`, so importing the same source twice finds the job "unchanged". Secrets are
write-only: a changed password is invisible here (`--replace` writes the source's again).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NotRequired, TypedDict

from scheduler_lib.actions.client_certificate import describe_certificate
from scheduler_lib.domain import JobDefinition, JobRecord
from scheduler_lib.domain.json_values import JSON, JSONObject, as_object
from scheduler_lib.migrate.convert import ImportedCollection, ImportedJob
from scheduler_lib.wire import collections as model_collections
from scheduler_lib.wire import dialect, extensions, notifications, secrets, signing
from scheduler_lib.wire import jobs as model_jobs
from scheduler_lib.wire.actions import CERT_DERIVED
from scheduler_lib.wire.versions import LATEST_VERSION, parse_version

#: The api-version the scheduler's jobs and collections are read in to be compared.
COMPARE_VERSION = LATEST_VERSION


class Timing(TypedDict, total=False):
    """A job's startTime and recurrence, canonical: what a preview reads (absent: not set)."""

    startTime: str
    recurrence: JSONObject


class CheckedCollection(TypedDict):
    """A job collection as the API would store it and GET shows it."""

    tags: JSONObject
    properties: JSONObject
    location: NotRequired[str]


@dataclass(frozen=True)
class CheckedJob:
    wire: JSONObject  # the properties as GET (2016-03-01) returns them, without state/status
    state: str
    timing: Timing


def check_job(job: ImportedJob) -> CheckedJob:
    """The job as the API would store it; ValidationError with the API's message."""
    properties = model_jobs.split_body(job.body)
    definition, state = model_jobs.parse_job(
        properties,
        parse_version(job.api_version),
        complete=lambda document: secrets.finalize(document["action"], describe_certificate),
    )
    model_jobs.check_size(definition)
    canonical = extensions.older_form(secrets.redact(dict(definition.document)), COMPARE_VERSION)
    # Only the definition and state are read by the rendering in COMPARE_VERSION.
    created = datetime(2000, 1, 1, tzinfo=UTC)
    record = JobRecord("", "", "", "", JobDefinition(canonical), created, state)
    wire = dialect.job_properties(canonical, record, COMPARE_VERSION)
    wire.pop("state", None)
    start, recurrence = definition.timing_key
    timing: Timing = {}
    if start is not None:
        timing["startTime"] = start
    if recurrence is not None:
        timing["recurrence"] = recurrence
    return CheckedJob(wire, str(state), timing)


def check_collection(collection: ImportedCollection) -> CheckedCollection:
    """The collection as the API would store it (defaults filled) and GET shows it (signing
    secrets without their values, notification URLs masked); ValidationError else."""
    version = parse_version(collection.api_version)
    location, tags, properties = model_collections.normalize_body(collection.body, version)
    shown = signing.redact(model_collections.complete(properties))
    result: CheckedCollection = {
        "tags": dict(tags or {}),
        "properties": notifications.redact(shown),
    }
    if location is not None:
        result["location"] = location
    return result


def job_differences(job: ImportedJob, checked: CheckedJob, remote: JSONObject) -> list[str]:
    """What differs between the import and the job the scheduler holds (GET, 2016-03-01).

    A job imported Disabled for a missing secret is compared without its state: once its
    secret is set and it is enabled, importing the source again must not disable it."""
    stored = dict(as_object(remote.get("properties")))
    state = stored.pop("state", None)
    stored.pop("status", None)
    local = dict(checked.wire)
    if any(m.field.endswith((".pfx", ".password")) for m in job.missing):
        local, stored = _without_certificate(local), _without_certificate(stored)
    found = list(differences(local, stored, "properties"))
    if not job.missing and state != checked.state:
        found.append(f"properties.state: {state} here, {checked.state} in the source")
    return found


def collection_differences(local: CheckedCollection, remote: JSONObject) -> list[str]:
    found = []
    if "location" in local and _location(local["location"]) != _location(remote.get("location")):
        found.append(f"location: {remote.get('location')} here, {local['location']} in the source")
    found += differences(local["tags"], remote.get("tags") or {}, "tags")
    stored = notifications.redact(signing.redact(as_object(remote.get("properties"))))
    for entry in stored.get(signing.PROPERTY) or ():
        entry.pop("createdTime", None)  # the scheduler's, not the source's
    found += differences(local["properties"], stored, "properties")
    return found


def _location(value: JSON) -> str:
    return str(value or "").replace(" ", "").lower()


def differences(local: Any, remote: Any, path: str) -> list[str]:
    """The paths where two JSON values differ (secret values never shown: none are here)."""
    if isinstance(local, dict) and isinstance(remote, dict):
        keys = sorted(set(local) | set(remote))
        return [d for k in keys for d in differences(local.get(k), remote.get(k), f"{path}.{k}")]
    if isinstance(local, list) and isinstance(remote, list) and len(local) == len(remote):
        return [d for i, pair in enumerate(zip(local, remote, strict=True))
                for d in differences(*pair, f"{path}[{i}]")]  # fmt: skip
    if local == remote:
        return []
    return [f"{path}: {_short(remote)} here, {_short(local)} in the source"]


def _short(value: Any) -> str:
    text = "absent" if value is None else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _without_certificate(properties: JSONObject) -> JSONObject:
    """Properties without a certificate's derived fields (a placeholder's differ each time)."""
    return {k: _strip(v) for k, v in properties.items() if k not in CERT_DERIVED}


def _strip(value: JSON) -> JSON:
    if isinstance(value, dict):
        return _without_certificate(value)
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value
