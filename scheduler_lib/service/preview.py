"""A schedule's next executions before a job goes live, plus what is wrong with it: the use
case behind `POST /api/preview` and the dashboard editor's live preview. An invalid schedule
is an answer (its errors, listed), not a failure; only a body that is not a preview request
raises (a ValidationError). The errors stay `SchedulerError`s: each front end renders them
(the API as ARM error objects)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, NotRequired, TypedDict

from scheduler_lib.errors import SchedulerError, ValidationError
from scheduler_lib.schedule import (
    JOB_PROPERTIES,
    MAX_JITTER,
    job_properties,
    preview_with_reason,
    read_now,
    starts,
)
from scheduler_lib.timeutil import iso_z
from scheduler_lib.wire import arm, extensions, jitter, readers, timing
from scheduler_lib.wire.versions import LATEST_VERSION, Location

MAX_COUNT = 1000
_TIMING = ("startTime", "recurrence", MAX_JITTER)
_ENVELOPE = ("id", "name", "type")  # of a job as GET returns it; `id` names its jitter
#: A whole job as GET returns it in any api-version: its extension properties are let through
#: (only the jitter, `MAX_JITTER`, affects when it runs).
_WHOLE_JOB = JOB_PROPERTIES + extensions.names(Location.JOB, LATEST_VERSION)


class SchedulePreview(TypedDict):
    """What a preview finds (its front ends write the errors as ARM error objects)."""

    executions: list[str]
    errors: list[SchedulerError]
    occurrences: NotRequired[list[str]]
    jitter: NotRequired[str]
    endReason: NotRequired[str]


def preview_schedule(body: Any, *, clock_now: datetime) -> SchedulePreview:
    """{"executions": [...ISO UTC], "errors": [SchedulerError]}, plus
    "endReason" when fewer than `count` executions are left (the CLI's last line). With jitter
    (2026-12-01), `executions` are the jittered starts and `occurrences` the
    scheduled times when the job's `id` says whose offsets they are; else `jitter` says so.

    The body is the bare timing (`_TIMING`, the jitter optional) with `id`, or a whole job
    as the CLI reads it (`{"properties": {...}}`, e.g. a GET response: its other keys do not
    affect a schedule and are not read), with `count` and `now` beside them."""
    whole = isinstance(body, dict) and "properties" in body
    allowed = (
        ("properties", "count", "now", *_ENVELOPE) if whole else (*_TIMING, "count", "now", "id")
    )
    source = readers.keys(body, "", allowed)
    count = readers.integer(source.get("count", 10), "count", low=1, high=MAX_COUNT)
    now = clock_now if source.get("now") is None else read_now(source["now"], "now")
    properties = readers.keys(job_properties(source), "properties", _WHOLE_JOB) if whole else source
    job = {k: v for k, v in properties.items() if k in _TIMING and v is not None}
    identity = arm.job_key_of_id(source.get("id"))  # whose jitter offsets: known with its id
    try:
        if "recurrence" in job:
            job["recurrence"] = timing.normalize_recurrence(job["recurrence"], "recurrence")
        if MAX_JITTER in job:
            job[MAX_JITTER] = jitter.validate(job[MAX_JITTER], MAX_JITTER)
        occurrences, reason = preview_with_reason(job, now=now, count=count, identity=identity)
    except ValidationError as exc:
        error = timing.prefixed(exc) if whole else exc
        return {"executions": [], "errors": [error]}
    except (OverflowError, ValueError) as exc:
        error = ValidationError("recurrence", f"cannot be evaluated ({type(exc).__name__})")
        return {"executions": [], "errors": [error]}
    executions = starts(job, occurrences, identity)
    no_errors: list[SchedulerError] = []
    result: SchedulePreview = {"executions": [iso_z(t) for t in executions], "errors": no_errors}
    if executions != occurrences:  # jittered: the occurrences the history will name
        result["occurrences"] = [iso_z(t) for t in occurrences]
    elif job.get(MAX_JITTER):
        result["jitter"] = f"each starts up to {job[MAX_JITTER]} later; send the job's id"
    if reason is not None:
        result["endReason"] = reason
    return result
