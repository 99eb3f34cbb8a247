"""A job's schedule as the API sees it: parse (errors prefixed with `properties.`), sample for
the recurrence quota, and what its bookkeeping becomes when it is enabled again or its
schedule starts over. Pure functions; `job_service` does the storage.
"""

from __future__ import annotations

from contextlib import suppress
from datetime import datetime, timedelta
from itertools import islice
from typing import Any

from scheduler_lib.errors import ValidationError
from scheduler_lib.lifecycle import EXECUTOR, executor_state
from scheduler_lib.model import quotas, timing
from scheduler_lib.recurrence import Schedule, parse_schedule
from scheduler_lib.store.jobs import JobRecord


def timing_of(definition: dict[str, Any]) -> tuple[Any, Any]:
    """What decides when a job runs: a change to it restarts the schedule from now."""
    return definition.get("startTime"), definition.get("recurrence")


def schedule_of(definition: dict[str, Any], created_time: datetime) -> Schedule:
    """The parsed schedule; its errors name the field as the request spells it."""
    try:
        return parse_schedule(definition, now=created_time)
    except ValidationError as exc:
        raise timing.prefixed(exc) from None


def sample(schedule: Schedule) -> list[datetime]:
    """The first `quotas.SAMPLE` executions, or fewer when the calendar ends first (a
    schedule near year 9999 overflows `datetime`; that is its end, not a server error)."""
    found: list[datetime] = []
    with suppress(OverflowError, ValueError):
        for execution in islice(schedule.executions(), quotas.SAMPLE):
            found.append(execution)
    return found


def resume(schedule: Schedule, bookkeeping: dict[str, Any], now: datetime) -> datetime | None:
    """The next execution of a job enabled again at `now`: the first one at or after now
    (occurrences missed while it was disabled are not run), None when `count` is used up."""
    if schedule.count is not None and bookkeeping.get("occurrences", 0) >= schedule.count:
        return None
    first = schedule.first()
    if first is None or first >= now:
        return first
    return schedule.next_after(now - timedelta(microseconds=1))


def restarted(existing: JobRecord | None) -> dict[str, Any]:
    """The bookkeeping of a schedule that starts over: no occurrences counted, but the
    executor's claims kept, so that an occurrence of the old schedule already sent (or sent
    twice by racing ticks) still runs at most once."""
    bookkeeping: dict[str, Any] = {"occurrences": 0}
    claims = executor_state(existing)["claims"] if existing else {}
    if claims:
        bookkeeping[EXECUTOR] = {"claims": claims}
    return bookkeeping
