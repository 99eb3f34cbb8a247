"""Extension 8 (2026-12-01): a note on why a job is paused, and stopping after failures
(validated here; counted and applied by the executor, `execution/pause.py`)."""

from __future__ import annotations

from typing import Any

from scheduler_lib.domain import JobRecord
from scheduler_lib.domain.definition import PAUSE_AFTER, PAUSE_NOTE
from scheduler_lib.wire import readers
from scheduler_lib.wire.versions import ExtensionProperty, ExtensionStatus, Location

#: A note is for people reading the job: a sentence or a ticket link, not a document.
MAX_PAUSE_NOTE = 1024


def pause_note(value: Any, path: str) -> str:
    """Free text, at most `MAX_PAUSE_NOTE` characters (an empty one is how it is cleared
    besides null)."""
    return readers.string(value, path, max_length=MAX_PAUSE_NOTE, empty=True)


#: More than this many faulted occurrences in a row is not "stop after failures" any more.
MAX_PAUSE_AFTER = 1000


def pause_after(value: Any, path: str) -> int:
    """`pauseAfterConsecutiveFailures`: how many faulted occurrences in a row disable the
    job (1 .. `MAX_PAUSE_AFTER`)."""
    return readers.integer(value, path, low=1, high=MAX_PAUSE_AFTER)


def consecutive_failures(record: JobRecord) -> int:
    """`status.consecutiveFailures`: faulted occurrences in a row (see execution/pause.py)."""
    return record.consecutive_failures


#: Its entry in the catalog (`extension_catalog`): read-only, under the job's `status`.
STATUS = ExtensionStatus(
    "consecutiveFailures",
    consecutive_failures,
    {"type": "integer", "description": "Faulted occurrences in a row (0 after a success)."},
)

#: Their entries in the catalog (`extension_catalog`).
ENTRIES = (
    ExtensionProperty(
        Location.JOB,
        PAUSE_NOTE,
        pause_note,
        {
            "type": "string",
            "maxLength": MAX_PAUSE_NOTE,
            "description": "Why the job is paused: free text kept with it and returned "
            "(shown with a Disabled job; set by the scheduler when "
            "pauseAfterConsecutiveFailures disables it).",
        },
    ),
    ExtensionProperty(
        Location.JOB,
        PAUSE_AFTER,
        pause_after,
        {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_PAUSE_AFTER,
            "description": "Disable the job after this many faulted occurrences in a row "
            "(an occurrence faults when its main action fails after its retries; a success "
            "ends the streak). Said in history, status.consecutiveFailures and pauseNote.",
        },
    ),
)
