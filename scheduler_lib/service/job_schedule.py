"""A job as a write makes it (`plan`, one call of `jobs`' PUT and PATCH): its definition
parsed and completed with what is stored (secrets, notification URLs, a certificate's
fields, the destinations judged), its size, SKU and recurrence quota checked, and its
schedule: parse (errors prefixed with `properties.`), sample for the recurrence quota, and
what its bookkeeping and next execution become when it is enabled again or its schedule
starts over. No storage: `jobs` reads and writes.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from itertools import islice
from typing import Any

from scheduler_lib.actions import destinations
from scheduler_lib.actions.client_certificate import describe_certificate
from scheduler_lib.domain import (
    Bookkeeping,
    CollectionRecord,
    ExecutorState,
    JobDefinition,
    JobRecord,
    JobState,
)
from scheduler_lib.domain.history_counter import EMPTY_HISTORY
from scheduler_lib.errors import ValidationError
from scheduler_lib.execution import executor_state
from scheduler_lib.notify import check_destinations
from scheduler_lib.schedule import JobTiming, Schedule, parse_schedule
from scheduler_lib.schedule.timezones import UTC_ZONE
from scheduler_lib.service.context import ApiContext
from scheduler_lib.wire import jobs, notifications, quotas, secrets, timing


@dataclass(frozen=True)
class JobPlan:
    """What a write of a job stores, and the collection limits its count is checked on."""

    definition: JobDefinition
    state: JobState
    created_time: datetime
    next_execution_time: datetime | None
    bookkeeping: Bookkeeping
    limits: quotas.Limits


def plan(
    ctx: ApiContext,
    properties: Any,
    existing: JobRecord | None,
    collection: CollectionRecord,
    now: datetime,
) -> JobPlan:
    """The job that `properties` (a PUT's, or a PATCH merged onto `existing`) make of
    `existing` (None: a new job) in `collection` at `now`, every check made: a 400 naming
    the field, or a 409 for a quota."""

    def complete(document: dict[str, Any]) -> None:
        if existing is not None:  # the stored JSON: a secret is carried over as it is stored
            secrets.carry_over(document["action"], existing.definition.document.get("action"))
        # Always: on a create, a masked notification URL names nothing stored (a 400).
        notifications.carry_over(document, existing.definition.document if existing else None)
        secrets.finalize(document["action"], describe_certificate)
        destinations.check_definition(document["action"], ctx.settings)
        check_destinations(document, ctx.settings)  # notifications' URLs, as the action's

    definition, state = jobs.parse_job(properties, ctx.version, complete=complete)
    jobs.check_size(definition)
    sku = collection.properties.get("sku", {}).get("name", "Standard")
    quotas.check_sku_features(sku, definition)
    limits = quotas.effective_limits(collection.properties)

    same_timing = existing is not None and existing.definition.timing_key == definition.timing_key
    created_time = existing.created_time if same_timing and existing else now
    schedule = schedule_of(definition, created_time)
    quotas.check_job_recurrence(limits, definition, steady_sample(definition, schedule))
    bookkeeping = existing.bookkeeping if same_timing and existing else restarted(existing)
    if not same_timing or existing is None:
        next_time = schedule.first()
        nothing_left = next_time is None
    elif existing.state == JobState.DISABLED and state == JobState.ENABLED:
        next_time = resume(schedule, bookkeeping, now)
        nothing_left = next_time is None
    else:
        # Unchanged timing: a job without a next execution may still have its final
        # occurrence in flight; the executor marks it Completed or Faulted when it ends.
        next_time = existing.next_execution_time
        nothing_left = False
    if nothing_left:
        state = JobState.COMPLETED
    return JobPlan(definition, state, created_time, next_time, bookkeeping, limits)


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
