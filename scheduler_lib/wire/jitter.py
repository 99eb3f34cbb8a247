"""Extension 4 (2026-12-01): `maxJitter`, validated; and the job's jittered next execution.

The offsets themselves are `schedule.jitter`'s (pure, shared with the dispatcher and the
preview). Bounds, and why: whole seconds (the queue delays whole seconds, and the offset is
a whole number of them); at most `PT1H`; and less than the smallest gap between two runs of
the job's rule (the steady sample the recurrence quota judges), so that jittered runs keep
their order and never run into the next occurrence.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import isodate

from scheduler_lib.domain import JobDefinition, JobRecord, JobState
from scheduler_lib.errors import ValidationError
from scheduler_lib.schedule import MAX_JITTER, MAX_JITTER_LIMIT, jittered_start
from scheduler_lib.timeutil import iso_z
from scheduler_lib.wire import readers
from scheduler_lib.wire.shapes import JobStatus, JSONObject
from scheduler_lib.wire.versions import ExtensionProperty, Location

SCHEMA: JSONObject = {
    "type": "string",
    "format": "duration",
    "description": "Each occurrence starts a stable pseudo-random number of whole seconds "
    "in [0, maxJitter) after its scheduled time (the same for the same job and occurrence). "
    "ISO 8601, whole seconds, at most PT1H and less than the smallest gap between runs.",
}


def validate(value: Any, path: str) -> str:
    """A canonical ISO duration of whole seconds, PT0S .. PT1H."""
    text = readers.duration(value, path)
    parsed = isodate.parse_duration(text)
    if parsed.microseconds:
        raise ValidationError(path, "must be whole seconds")
    if parsed > MAX_JITTER_LIMIT:
        raise ValidationError(
            path, f"must be at most {isodate.duration_isoformat(MAX_JITTER_LIMIT)}"
        )
    return text


def check_gaps(definition: JobDefinition, executions: Sequence[datetime]) -> None:
    """`maxJitter` is less than the smallest gap between the rule's runs (`executions`: the
    steady sample of the recurrence quota; empty for a job that runs once)."""
    jitter = definition.max_jitter
    gaps = [later - earlier for earlier, later in itertools.pairwise(executions)]
    if jitter and gaps and jitter >= min(gaps):
        raise ValidationError(
            f"properties.{MAX_JITTER}",
            f"must be less than the smallest gap between the job's runs ({min(gaps)})",
        )


def upcoming_occurrence(record: JobRecord, now: datetime) -> datetime | None:
    """`JobRecord.upcoming_execution` judged by jittered starts: the scheduled time of the
    earliest sent occurrence that has not *started* by `now` (inside its jitter window its
    scheduled time has passed, but it is still the next run), else the next one. What GET,
    the dashboard and (from the schedule alone) the preview all name."""
    if not record.definition.max_jitter:
        return record.upcoming_execution(now)
    if record.state != JobState.ENABLED:
        return None  # nothing of it runs (as `JobRecord.upcoming_execution`)
    pending = [o for o in record.bookkeeping.sent if _start(record, o) > now]
    if pending:
        return min(pending)
    return record.next_execution_time


def upcoming(record: JobRecord, now: datetime) -> datetime | None:
    """When the job's next run starts: `upcoming_occurrence` at its jittered start."""
    occurrence = upcoming_occurrence(record, now)
    return None if occurrence is None else _start(record, occurrence)


def _start(record: JobRecord, occurrence: datetime) -> datetime:
    return jittered_start(record.key, record.definition.max_jitter, occurrence)


def jittered_status(status: JobStatus, record: JobRecord, now: datetime) -> JobStatus:
    """`status` with `nextExecutionTime` the instant the next occurrence really starts (in
    every api-version: it is when the job runs, whoever asks)."""
    nxt = upcoming(record, now) if record.definition.max_jitter else None
    return status if nxt is None else {**status, "nextExecutionTime": iso_z(nxt)}


#: Its entry in the catalog (`extension_catalog`): where it is, its validator, its schema.
ENTRY = ExtensionProperty(Location.JOB, MAX_JITTER, validate, SCHEMA)
