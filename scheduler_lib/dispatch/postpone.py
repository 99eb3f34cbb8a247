"""Occurrences missed by downtime: postponed, not run late in a burst.

An occurrence due more than the grace period before the tick was missed while the scheduler
was not running. Running every missed occurrence of every job at once would hammer the
targets, so instead the job records ONE `Postponed` history entry naming what it skipped and
continues at its next occurrence after now. Skipped occurrences do not count as executions
(`occurrences`, which `count` is compared with, is unchanged): a job with `count: 5` still
runs five times. A job with no later occurrence (its endTime passed) is Completed here, as no
execution will follow to complete it.

Exactly one history entry, even across a crash: the job is advanced first, with a marker
(`bookkeeping["postponed"]`: the missed occurrence and the message) in the same
ETag-conditional write, so only one of two racing ticks goes on to write the entry. If the
tick dies before writing it, the old due-index row is still there; the next tick finds it
stale, sees the marker and writes the entry unless the newest `Postponed` entry is already it.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime

import isodate

from scheduler_lib.dispatch import catch_up
from scheduler_lib.dispatch.context import (
    Counts,
    TickContext,
    advance_job,
)
from scheduler_lib.domain import JobRecord, JobState, Outcome, Postponement
from scheduler_lib.domain.outcomes import OccurrenceEnded
from scheduler_lib.execution import MAIN_ACTION
from scheduler_lib.schedule import Schedule
from scheduler_lib.store import (
    POSTPONED_STATUS,
    DueRow,
    HistoryEntry,
    add_history,
    list_history,
)
from scheduler_lib.timeutil import iso_z
from scheduler_lib.wire.missed import missed_runs

log = logging.getLogger(__name__)

#: How many skipped occurrences are counted for the message (an every-minute job down for
#: a week would otherwise cost ten thousand schedule steps just to say how many).
MAX_COUNTED = 1000


def postpone(
    ctx: TickContext, job: JobRecord, row: DueRow, counts: Counts
) -> tuple[JobRecord | None, bool]:
    """Skip every occurrence from `row.due` through now; continue at the next one after now."""
    schedule = job.schedule
    nxt = schedule.next_after(ctx.now)
    late = missed_runs(job, schedule, row.due, now=ctx.now)  # its missed-run policy
    marker = Postponement(row.due, _message(ctx, schedule, row.due, nxt) + catch_up.note(late))

    def advance(current: JobRecord) -> JobRecord:
        return replace(
            current,
            next_execution_time=nxt,
            state=current.state if nxt is not None else JobState.COMPLETED,
            bookkeeping=replace(current.bookkeeping, postponed=marker),
        )

    saved, won = advance_job(ctx, job, row, counts, advance)
    if won and saved is not None:
        _record(ctx, saved, row.due, marker.message)
        catch_up.send_missed(ctx.queue, saved, late, now=ctx.now)
        ctx.remove_row(row)
        counts.postponed += 1
        counts.completed += nxt is None
        _observe(ctx, saved)
    return saved, won


def finish_interrupted_postponement(
    ctx: TickContext, job: JobRecord, row: DueRow, marker: Postponement, counts: Counts
) -> None:
    """Write the history entry of a postponement whose tick died after advancing the job."""
    counts.history_entities_read += 1
    newest, _ = list_history(ctx.store, job.history_key, status=POSTPONED_STATUS, page_size=1)
    if newest and newest[0].expected_execution_time == row.due:
        return
    _record(ctx, job, row.due, marker.message)
    counts.postponed += 1
    _observe(ctx, job)


def _observe(ctx: TickContext, job: JobRecord) -> None:
    """Tell the tick's observer: the job's occurrences were missed by downtime."""
    kind = job.definition.action_type() or ""
    ctx.observe(OccurrenceEnded(job.key, kind, Outcome.MISSED))


def _record(ctx: TickContext, job: JobRecord, due: datetime, message: str) -> None:
    log.info("occurrences postponed: %s", message, extra={"job": job.key, "occurrence": iso_z(due)})
    add_history(
        ctx.store,
        HistoryEntry(
            job_key=job.history_key,
            start_time=ctx.now,
            end_time=ctx.now,
            expected_execution_time=due,
            action_name=MAIN_ACTION,
            status=POSTPONED_STATUS,
            message=message,
            repeat_count=job.bookkeeping.occurrences,
        ),
    )


def _message(ctx: TickContext, schedule: Schedule, first: datetime, nxt: datetime | None) -> str:
    """What was skipped and when the job continues, for the history entry."""
    skipped, last = 0, first
    instant: datetime | None = first
    while instant is not None and instant <= ctx.now and skipped < MAX_COUNTED:
        skipped, last = skipped + 1, instant
        instant = schedule.next_after(instant)
    grace = isodate.duration_isoformat(ctx.settings.grace_period)
    if instant is not None and instant <= ctx.now:
        span = f"more than {MAX_COUNTED} occurrences missed, due from {iso_z(first)} to "
        span += iso_z(ctx.now)
    elif skipped == 1:
        span = f"1 occurrence missed, due at {iso_z(first)}"
    else:
        span = f"{skipped} occurrences missed, due from {iso_z(first)} to {iso_z(last)}"
    # Worded as the entry's status says (Postponed, not Skipped: that is the overlap policy's).
    what = (
        f"Postponed: {span}, by more than the grace period ({grace}) "
        "while the scheduler was not running."
    )
    if nxt is None:
        return f"{what} The job has no later occurrence and is Completed."
    return f"{what} It continues at {iso_z(nxt)}."
