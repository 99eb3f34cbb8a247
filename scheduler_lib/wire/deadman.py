"""The dead-man switch (2026-12-01): `alertIfNoSuccessWithin` on a job, or on a collection
as the default of its jobs, and the `health` a job's status shows (judged by
`scheduler_lib/notify/deadman.py` in the dispatcher's upkeep; docs/notifications.md)."""

from __future__ import annotations

from datetime import timedelta
from enum import StrEnum
from typing import Any

from scheduler_lib.domain import JobRecord
from scheduler_lib.domain.definition import (
    ALERT_IF_NO_SUCCESS_WITHIN,
    MAX_ALERT_WINDOW,
    alert_window,
)
from scheduler_lib.errors import ValidationError
from scheduler_lib.wire import readers
from scheduler_lib.wire.shapes import JSONObject
from scheduler_lib.wire.versions import ExtensionProperty, ExtensionStatus, Location

PROPERTY = ALERT_IF_NO_SUCCESS_WITHIN
#: The upkeep judges once a minute: a shorter window could not be kept.
MIN_WINDOW = timedelta(minutes=1)
MAX_WINDOW = MAX_ALERT_WINDOW
SCHEMA: JSONObject = {
    "type": "string",
    "description": "ISO 8601 duration (PT1M to P366D): when this long passes without a "
    "succeeded execution while the job is Enabled and due to have run, its status.health "
    "becomes Overdue and a Missed notification is sent (once). On a collection: the default "
    "of its jobs.",
}


class Health(StrEnum):
    HEALTHY = "Healthy"
    FAILING = "Failing"  # its last occurrence faulted
    OVERDUE = "Overdue"  # the dead-man switch fired and no success came since


def validate(value: Any, path: str) -> str:
    """Canonical ISO duration between `MIN_WINDOW` and `MAX_WINDOW`."""
    text = readers.duration(value, path, low=MIN_WINDOW)
    if alert_window(text) > MAX_WINDOW:
        raise ValidationError(path, "must be at most P366D")
    return text


def health(record: JobRecord) -> str:
    """`status.health`: Overdue (dead-man), else Failing (a faulted streak), else Healthy."""
    if record.overdue_since is not None:
        return Health.OVERDUE.value
    return Health.FAILING.value if record.consecutive_failures else Health.HEALTHY.value


HEALTH_SCHEMA: JSONObject = {
    "type": "string",
    "enum": [h.value for h in Health],
    "description": f"Overdue: no success within {PROPERTY}; Failing: the last "
    "occurrence faulted; Healthy otherwise.",
}
#: Its entry in the catalog (`extension_catalog`): read-only, under the job's `status`.
STATUS = ExtensionStatus("health", health, HEALTH_SCHEMA)


#: A collection's window is the default of its jobs; a job's own replaces it.
ENTRIES = (
    ExtensionProperty(Location.COLLECTION, PROPERTY, validate, SCHEMA),
    ExtensionProperty(Location.JOB, PROPERTY, validate, SCHEMA),
)
