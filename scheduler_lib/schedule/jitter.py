"""Jitter (extension `maxJitter`, api-version 2026-12-01): each occurrence of a job starts a
stable pseudo-random number of whole seconds after its scheduled time.

500 jobs at 09:00 would otherwise hit one target in one second. The offset is a hash of the
job's identity and the occurrence, not a random draw, so every part of the scheduler that
asks gets the same answer without storing it: the dispatcher (when to make the message
visible), the executor (when to start, how late it is), the API (`nextExecutionTime`) and the
preview. The occurrence itself (its execution tag, its history entry) keeps its scheduled
time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import isodate

#: The key of a job definition that holds it (an ISO 8601 duration, whole seconds).
MAX_JITTER = "maxJitter"
#: The largest jitter: an occurrence an hour late is not "the same time, spread out".
MAX_JITTER_LIMIT = timedelta(hours=1)


def max_jitter(properties: Mapping[str, Any]) -> timedelta:
    """The `maxJitter` of job properties not stored yet (a preview's, the editor's; zero
    without one). A stored job's is its `JobDefinition.max_jitter`."""
    text = properties.get(MAX_JITTER)
    if not text:
        return timedelta(0)
    parsed = isodate.parse_duration(text)
    return parsed if isinstance(parsed, timedelta) else timedelta(0)


def offset(identity: str, occurrence: datetime, jitter: timedelta) -> timedelta:
    """The whole-second offset in [0, jitter) of `identity`'s occurrence at `occurrence`:
    SHA-256 of the two, so the same job and occurrence always get the same offset and
    different jobs spread evenly."""
    seconds = int(jitter.total_seconds())
    if seconds <= 1:
        return timedelta(0)
    instant = occurrence.astimezone(UTC).isoformat()
    digest = hashlib.sha256(f"{identity}|{instant}".encode()).digest()
    return timedelta(seconds=int.from_bytes(digest[:8], "big") % seconds)


def jittered_start(identity: str, jitter: timedelta, occurrence: datetime) -> datetime:
    """When the occurrence due at `occurrence` of the job `identity`, whose `maxJitter` is
    `jitter`, starts.
    Never after the calendar's last whole second: an occurrence in year 9999's last hour
    starts at most then (as `parse.whole_second` keeps that second), not with an
    OverflowError in every reader."""
    shift = offset(identity, occurrence, jitter)
    try:
        return occurrence + shift
    except OverflowError:
        return max(occurrence, datetime.max.replace(microsecond=0, tzinfo=occurrence.tzinfo))
