"""Job definitions: the request body into a `JobDefinition` (`parse_job`), the record into
wire JSON (`job_to_wire`, its `status` object from `status_of`).

The stored definition is `{startTime?, recurrence?, action}` in canonical form (see
`timing` and `actions`), the `JobDefinition.document` a parse makes; `state` and `status`
are columns of the job record, and `status` is kept by the system: on input it is accepted
(the SDK round-trips it) and ignored.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

from scheduler_lib.domain import JOB_STATES, USER_JOB_STATES, JobDefinition, JobRecord, JobState
from scheduler_lib.errors import ValidationError
from scheduler_lib.schedule import JobTiming
from scheduler_lib.timeutil import iso_z
from scheduler_lib.wire import (
    arm,
    dialect,
    extensions,
    jitter,
    original_form,
    readers,
    secrets,
    timing,
)
from scheduler_lib.wire.actions import normalize_action
from scheduler_lib.wire.shapes import JobAnswer, JobStatus, JSONObject, to_json
from scheduler_lib.wire.versions import DEFAULT_VERSION, LATEST_VERSION, ApiVersion, Location

#: Azure Scheduler's limit on a job's JSON.
MAX_JOB_BYTES = 16 * 1024
BODY_KEYS = ("id", "name", "type", "properties")
PROPERTY_KEYS = ("startTime", "action", "recurrence", "state", "status")


def split_body(body: Any) -> JSONObject:
    """The `properties` of a JobDefinition body (`id`, `name`, `type` are read-only and
    ignored: a client may send back what it read)."""
    for key in readers.obj(body, ""):
        if key.lower() in {name.lower() for name in PROPERTY_KEYS}:
            raise ValidationError(
                key,
                'belongs inside "properties": the 2016-03-01 API takes '
                '{"properties": {"startTime", "action", "recurrence", "state"}}',
            )
    source = readers.keys(body, "", BODY_KEYS)
    if source.get("properties") is None:
        raise ValidationError("properties", "is required")
    return readers.obj(source["properties"], "properties")


def parse_job(
    properties: Any,
    version: ApiVersion = DEFAULT_VERSION,
    *,
    path: str = "properties",
    complete: Callable[[JSONObject], None] | None = None,
) -> tuple[JobDefinition, JobState]:
    """(definition, requested state) from the job `properties` of a request of `version`: every
    validator runs once (`normalize_properties`: the fields', the timing's, the extensions'
    cross-checks), and the timing they parsed is kept on the definition, not parsed again.
    `complete` completes the canonical document before the value is made (the API carries
    the stored secrets over, derives a certificate's fields and judges the destinations)."""
    document, state, timing = normalize_properties(properties, path=path, version=version)
    if complete is not None:
        complete(document)
    return JobDefinition.parsed(document, timing), JobState(state)


def normalize_properties(
    value: Any, *, path: str = "properties", version: ApiVersion = DEFAULT_VERSION
) -> tuple[JSONObject, str, JobTiming]:
    """(definition, requested state, parsed timing) from the job `properties` (a complete one:
    PUT, or a PATCH already merged onto the stored definition). Timing is validated by the
    engine, whose parse is returned so that the schedule is built without a second one.
    `version` decides which extension properties are known (`extensions`)."""
    source = readers.keys(value, path, PROPERTY_KEYS + extensions.names(Location.JOB, version))
    if source.get("action") is None:
        raise ValidationError(readers.join(path, "action"), "is required")
    definition: JSONObject = {}
    if source.get("startTime") is not None:
        definition["startTime"] = readers.datetime_string(
            source["startTime"], readers.join(path, "startTime")
        )
    if source.get("recurrence") is not None:
        definition["recurrence"] = timing.normalize_recurrence(
            source["recurrence"], readers.join(path, "recurrence"), version=version
        )
    definition["action"] = normalize_action(
        source["action"], readers.join(path, "action"), version=version
    )
    definition.update(extensions.read(Location.JOB, source, path, version))
    parsed = timing.validate_timing(definition)
    extensions.cross_check(definition, path, version)
    state: str = JobState.ENABLED
    if source.get("state") is not None:
        where = readers.join(path, "state")
        state = readers.enum(source["state"], where, JOB_STATES)
        if state not in USER_JOB_STATES:
            raise ValidationError(where, "only Enabled or Disabled can be requested")
    return definition, state, parsed


def check_size(definition: JobDefinition) -> None:
    """Azure Scheduler's 16 KB limit on a job, measured on its stored JSON."""
    size = len(json.dumps(definition.document, separators=(",", ":")).encode())
    if size > MAX_JOB_BYTES:
        raise ValidationError(
            "properties", f"the job is {size} bytes of JSON; at most {MAX_JOB_BYTES} are allowed"
        )


def patched_properties(
    record: JobRecord, patch: JSONObject, version: ApiVersion
) -> tuple[JSONObject, ApiVersion]:
    """(merged properties, the version to validate them with) for a PATCH of `version`
    onto the job's stored properties, with its state, as the client wrote them
    (`original_form.restore`: what the patch leaves alone keeps its spelling). Merged onto
    the *redacted* stored form: a secret then only survives through `secrets.carry_over`,
    whose identity rule holds for PATCH as for PUT.

    A PATCH of an older version leaves the stored extension properties alone: it is first
    validated as that version sees the job (so an extension property in it is the usual
    400 "not a known property"), then merged onto the whole stored definition, which is
    validated with every extension it holds. (A job without any, as every job written by
    that version, is validated once, as that version.)"""
    written = original_form.restore(dict(record.definition.document), record.original_form)
    stored = {**secrets.redact(written), "state": record.state}
    older = extensions.older_form(stored, version)
    if older == stored:
        return merge_patch(stored, patch), version
    normalize_properties(merge_patch(older, patch), version=version)
    return merge_patch(stored, patch), LATEST_VERSION


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch, except that a changed `type` replaces the whole object
    (so patching an Http action into a StorageQueue one leaves no `request` behind), and a
    `retryPolicy` is a unit: a patch's policy replaces the stored one (defaults fill what it
    leaves out), also when given inside `request` as the documentation writes it."""
    if not isinstance(patch, dict):
        return patch
    patch = _lift_request_retry_policy(patch)
    if not isinstance(target, dict):
        target = {}
    new_type, old_type = patch.get("type"), target.get("type")
    if (
        isinstance(new_type, str)
        and isinstance(old_type, str)
        and new_type.lower() != old_type.lower()
    ):
        target = {}
    result = dict(target)
    for key, value in patch.items():
        # Match keys case-insensitively so `Action` patches the stored `action`.
        existing = next((k for k in result if k.lower() == key.lower()), key)
        if value is None:
            result.pop(existing, None)
        elif key.lower() == "retrypolicy":
            result.pop(existing, None)
            result[key] = value
        else:
            merged = merge_patch(result.pop(existing, None), value)
            result[key] = merged
    return result


def _lift_request_retry_policy(patch: JSONObject) -> JSONObject:
    """An action patch with `retryPolicy` inside `request` (and none beside it) sets the
    action's policy: moved up, it replaces the stored one instead of contradicting it."""
    request = patch.get("request")
    if not isinstance(request, dict) or "retryPolicy" not in request or "retryPolicy" in patch:
        return patch
    inner = {k: v for k, v in request.items() if k != "retryPolicy"}
    return {**patch, "request": inner, "retryPolicy": request["retryPolicy"]}


def job_to_wire(
    record: JobRecord, *, now: datetime, version: ApiVersion = DEFAULT_VERSION
) -> JobAnswer:
    """A JobDefinition as the API returns it at `now`: no secrets, system status (see
    `JobRecord.upcoming_execution` for why it depends on the time), ARM identity; only
    the extension properties `version` has, written as `version` writes them (`dialect`)."""
    definition = extensions.older_form(secrets.redact(dict(record.definition.document)), version)
    properties = dialect.job_properties(definition, record, version)
    if dialect.shows_status(record, version):
        status = jitter.jittered_status(status_of(record, now), record, now)
        properties["status"] = {**to_json(status), **extensions.status_of(record, version)}
    return {
        "id": arm.job_id(
            record.subscription_id, record.resource_group, record.collection_name, record.name
        ),
        "type": arm.JOB_TYPE,
        "name": f"{record.collection_name}/{record.name}",
        "properties": properties,
    }


def status_of(record: JobRecord, now: datetime) -> JobStatus:
    """The `status` object of the wire format as of `now` (times as ISO 8601 UTC)."""
    status: JobStatus = {
        "executionCount": record.execution_count,
        "failureCount": record.failure_count,
        "faultedCount": record.faulted_count,
    }
    if record.last_execution_time is not None:
        status["lastExecutionTime"] = iso_z(record.last_execution_time)
    upcoming = record.upcoming_execution(now)
    if upcoming is not None:
        status["nextExecutionTime"] = iso_z(upcoming)
    return status
