"""One job's part of a dispatcher tick: check its due rows, send, advance, move the row.

The order of writes is what makes a tick safe to crash, repeat or race:

1. send the execution message (its tag derives from job and occurrence, so a repeat is
   identical and the executor drops it);
2. write the due-index row of the next occurrence (before the job points at it, so a job
   is never left pointing at an occurrence nobody will find);
3. advance the job, ETag-conditional: only one of two racing ticks wins; the loser re-reads
   and, if the job still waits for this occurrence (someone else only touched keys the
   dispatcher does not own), re-applies the advance;
4. remove the old row.

A crash after 1 re-sends the same message next tick; after 2 leaves a harmless stale row;
after 3 leaves the old row, which the next tick finds stale and drops. The job never
advances past an occurrence whose message was not sent.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime

from scheduler_lib.dispatch.context import (
    Counts,
    TickContext,
    advance_job,
)
from scheduler_lib.dispatch.postpone import finish_interrupted_postponement, postpone
from scheduler_lib.domain import JobRecord
from scheduler_lib.execution import ExecutionMessage
from scheduler_lib.schedule import Schedule, jittered_start
from scheduler_lib.store import DueRow, add_due
from scheduler_lib.timeutil import iso_z

log = logging.getLogger(__name__)


def dispatch_read_job(ctx: TickContext, job: JobRecord | None, rows: list[DueRow]) -> Counts:
    """Handle one job's occurrence rows (oldest first) given its entity as read (None: gone),
    then keep going while its next occurrence still falls in the minutes this tick reads (an
    occurrence run late within the grace period, or one in the look-ahead minute)."""
    counts = Counts()
    handle_rows(ctx, job, rows, counts)
    return counts


def handle_rows(
    ctx: TickContext, job: JobRecord | None, rows: list[DueRow], counts: Counts
) -> JobRecord | None:
    """`dispatch_read_job`'s work, counted into `counts`; returns the job as it is after it
    (as stored by the last write, or as read: whoever calls need not read it again)."""
    for row in sorted(rows, key=lambda r: r.due):
        if job is None:
            _drop(ctx, row, counts)
            continue
        current: DueRow | None = row
        while current is not None and job is not None:
            job, current = _handle(ctx, job, current, counts)
    return job


def _handle(
    ctx: TickContext, job: JobRecord, row: DueRow, counts: Counts
) -> tuple[JobRecord | None, DueRow | None]:
    """Handle one row; returns the job as it now is and the next row to handle, if any."""
    if not ctx.runnable(job) or job.next_execution_time != row.due:
        _stale(ctx, job, row, counts)
        return job, None
    incarnation = job.incarnation
    if jittered_start(job.key, job.definition.max_jitter, row.due) < ctx.grace_cutoff:
        handled, won = postpone(ctx, job, row, counts)
    else:
        handled, won = _send(ctx, job, row, counts)
    if not won and handled is not None and handled.incarnation != incarnation:
        # Deleted and created again meanwhile: the new job's occurrence is its own (the row is
        # shared by name), handled now under its incarnation rather than a tick later.
        return handled, row
    nxt = handled.next_execution_time if won and handled is not None else None
    if handled is None or nxt is None or not ctx.in_range(nxt):
        return handled, None
    return handled, DueRow(handled.key, nxt, row_key=handled.key)


def _send(
    ctx: TickContext, job: JobRecord, row: DueRow, counts: Counts
) -> tuple[JobRecord | None, bool]:
    number = job.bookkeeping.occurrences + 1
    start = jittered_start(job.key, job.definition.max_jitter, row.due)  # row.due without it
    message = ExecutionMessage.scheduled(job.key, row.due, number, job.incarnation, start=start)
    ctx.queue.send(message, visible_at=start, now=ctx.send_now())
    counts.messages_sent += 1
    log.debug(
        "occurrence sent",
        extra={"job": job.key, "occurrence": iso_z(row.due), "tag": message.execution_tag},
    )

    def advance(current: JobRecord) -> JobRecord:
        return advanced(current, row.due, current.schedule)

    stored, won = advance_job(ctx, job, row, counts, advance)
    if won:
        ctx.remove_row(row)
    return stored, won


def advanced(job: JobRecord, due: datetime, schedule: Schedule | None = None) -> JobRecord:
    """`job` once its occurrence at `due` is sent: counted, and moved to the next one
    (`schedule`: another than the job's own, when the caller has one)."""
    if schedule is None:
        schedule = job.schedule
    bookkeeping = job.bookkeeping.with_sent(due)
    # Occurrences the executor postponed unrun give their place back (`not_run`).
    count_reached = schedule.count is not None and bookkeeping.counted >= schedule.count
    nxt = None if count_reached else schedule.next_after(due)
    return replace(job, next_execution_time=nxt, bookkeeping=bookkeeping)


def expected_next_row(ctx: TickContext, job: JobRecord, rows: list[DueRow]) -> datetime | None:
    """The next occurrence's row this job will need if its first row is sent as usual, for
    the tick to write in a batch before it handles the job (None: not the usual case, or no
    next occurrence; `advance_job` then writes whatever it needs itself)."""
    first = min(rows, key=lambda r: r.due)
    if not ctx.runnable(job) or job.next_execution_time != first.due:
        return None
    if jittered_start(job.key, job.definition.max_jitter, first.due) < ctx.grace_cutoff:
        return None
    return advanced(job, first.due).next_execution_time


def _stale(ctx: TickContext, job: JobRecord, row: DueRow, counts: Counts) -> None:
    """A row the job no longer waits for: finish a postponement a crash interrupted, make
    sure the occurrence the job does wait for has its row, and drop this one."""
    postponed = job.bookkeeping.postponed
    if postponed is not None and postponed.due == row.due:
        finish_interrupted_postponement(ctx, job, row, postponed, counts)
    elif ctx.runnable(job) and job.next_execution_time is not None:
        add_due(ctx.store, job.key, job.next_execution_time)  # idempotent repair
    _drop(ctx, row, counts)


def _drop(ctx: TickContext, row: DueRow, counts: Counts) -> None:
    ctx.remove_row(row)
    counts.stale_dropped += 1
