"""A job's schedule as the API sees it: parse (errors prefixed with `properties.`), sample for
the recurrence quota, and what its bookkeeping becomes when it is enabled again or its
schedule starts over. Pure functions; `jobs` does the storage.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import replace
from datetime import datetime, timedelta
from itertools import islice

from scheduler_lib.domain import Bookkeeping, ExecutorState, JobDefinition, JobRecord
from scheduler_lib.domain.history_counter import EMPTY_HISTORY
from scheduler_lib.errors import ValidationError
from scheduler_lib.execution import executor_state
from scheduler_lib.schedule import JobTiming, Schedule, parse_schedule
from scheduler_lib.schedule.timezones import UTC_ZONE
from scheduler_lib.wire import quotas, timing


def schedule_of(definition: JobDefinition, created_time: datetime) -> Schedule:
    """The job's schedule (built from the timing its parse kept); its errors name the field
    as the request spells it."""
    try:
        return definition.schedule(created_time)
    except ValidationError as exc:
        raise timing.prefixed(exc) from None


def steady_sample(definition: JobDefinition, schedule: Schedule) -> list[datetime]:
    """Up to `quotas.SAMPLE` executions of the job's rule in steady state, for the recurrence
    quota: what the rule itself produces, never the distance from "now" or from startTime.

    - A job that runs at most once (no recurrence, `count` 1, nothing left before endTime)
      never recurs: an empty sample.
    - The immediate first run of a job without startTime is not part of the rule, so the
      sample is of the rule's own steps from the reference instant R (startTime, else the
      creation instant), with `count` and `endTime` dropped.
    - Gaps are wall-clock gaps: the rule is read in UTC instead of its `timeZone`, so a daily
      job stays "every 24 hours" across the day a clock springs forward (23 elapsed hours).
    """
    recurrence = definition.timing.recurrence
    if recurrence is None or len(list(islice(schedule.executions(), 2))) < 2:
        return []
    steady_rule = replace(recurrence, count=None, end_time=None)
    found: list[datetime] = []
    with suppress(OverflowError, ValueError, ValidationError):
        steady_timing = JobTiming(schedule.reference, steady_rule, UTC_ZONE)
        steady = parse_schedule({}, now=schedule.reference, timing=steady_timing)
        for execution in islice(steady.executions(), quotas.SAMPLE):
            found.append(execution)
    return found


def resume(schedule: Schedule, bookkeeping: Bookkeeping, now: datetime) -> datetime | None:
    """The next execution of a job enabled again at `now`: the first one at or after now
    (occurrences missed while it was disabled are not run), None when `count` is used up."""
    if schedule.count is not None and bookkeeping.occurrences >= schedule.count:
        return None
    first = schedule.first()
    if first is None or first >= now:
        return first
    return schedule.next_after(now - timedelta(microseconds=1))


def restarted(existing: JobRecord | None) -> Bookkeeping:
    """The bookkeeping of a schedule that starts over: no occurrences counted, but the
    executor's claims kept, so that an occurrence of the old schedule already sent (or sent
    twice by racing ticks) still runs at most once, and its snapshot of the history counter
    (the history stays). A new job's history is known empty (`HistoryCounter`): its first
    entry is written without reading the counter."""
    if existing is None:
        return Bookkeeping(executor=ExecutorState(history=EMPTY_HISTORY))
    state = executor_state(existing)
    kept = ExecutorState(state.claims, history=state.history)
    return Bookkeeping(executor=kept if kept != ExecutorState() else None)
