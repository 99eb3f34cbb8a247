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

Step 1 may have been done before the job's task ran: occurrences that become visible in
the same second are sent by the chunk as one batch message first (`batch.py`); `_send` then
skips a message identical to one a batch carried, and does the rest as for any other. Steps
2 and 3 may have been too, in that order: the chunk writes the next rows it expects in
transactions (`prewritten`), then advances together the jobs whose message a batch carried
and whose next row is written (`advances_ahead`, `advanced_together`); `_send` takes such
an advance as its own when it is of the job as its task read it.

A crash after 1 re-sends the same message next tick; after 2 leaves a harmless stale row;
after 3 leaves the old row, which the next tick finds stale and drops. The job never
advances past an occurrence whose message was not sent. What to do with a row (drop,
stale, postpone, send) is `decide`'s; this module reads and writes.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from scheduler_lib.dispatch.context import (
    Counts,
    TickContext,
    advance_job,
)
from scheduler_lib.dispatch.decide import Postpone, Send, Stale, advanced, decide_row
from scheduler_lib.dispatch.postpone import finish_interrupted_postponement, postpone
from scheduler_lib.domain import JobRecord
from scheduler_lib.execution import ExecutionMessage
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
    decision = _decide(ctx, job, row)
    if isinstance(decision, Stale):
        _stale(ctx, job, row, decision, counts)
        return job, None
    incarnation = job.incarnation
    if isinstance(decision, Postpone):
        handled, won = postpone(ctx, job, row, counts)
    else:
        handled, won = _send(ctx, job, row, decision, counts)
    if not won and handled is not None and handled.incarnation != incarnation:
        # Deleted and created again meanwhile: the new job's occurrence is its own (the row is
        # shared by name), handled now under its incarnation rather than a tick later.
        return handled, row
    nxt = handled.next_execution_time if won and handled is not None else None
    if handled is None or nxt is None or not ctx.in_range(nxt):
        return handled, None
    return handled, DueRow(handled.key, nxt, row_key=handled.key)


def _decide(ctx: TickContext, job: JobRecord, row: DueRow) -> Stale | Postpone | Send:
    return decide_row(job, row.due, runnable=ctx.runnable(job), grace_cutoff=ctx.grace_cutoff)


def _send(
    ctx: TickContext, job: JobRecord, row: DueRow, send: Send, counts: Counts
) -> tuple[JobRecord | None, bool]:
    message = _message(job, row, send)
    if message not in ctx.sent_in_batches:  # only the very message a batch carried (batch.py)
        ctx.queue.send(message, visible_at=send.start, now=ctx.send_now())
        counts.queue_sends += 1
    counts.messages_sent += 1
    log.debug(
        "occurrence sent",
        extra={"job": job.key, "occurrence": iso_z(row.due), "tag": message.execution_tag},
    )

    def advance(current: JobRecord) -> JobRecord:
        return _advanced(current, row)

    stored: JobRecord | None
    together = ctx.advanced_together.get((job.key, row.due))
    if together is not None and together[0] == job.etag:  # the chunk wrote this very advance
        stored, won = together[1], True
    else:
        stored, won = advance_job(ctx, job, row, counts, advance)
    if won:
        ctx.remove_row(row)
    return stored, won


def _advanced(job: JobRecord, row: DueRow) -> JobRecord:
    """`job` moved past the occurrence of `row`, which it sent."""
    return advanced(job, row.due, job.schedule)


def _message(job: JobRecord, row: DueRow, send: Send) -> ExecutionMessage:
    number, start = send.number, send.start
    return ExecutionMessage.scheduled(job.key, row.due, number, job.incarnation, start=start)


def _first_send(ctx: TickContext, job: JobRecord, rows: list[DueRow]) -> tuple[DueRow, Send] | None:
    """The job's first row and its `Send`, if the job's task starts by sending it."""
    first = min(rows, key=lambda r: r.due)
    decision = _decide(ctx, job, first)
    return (first, decision) if isinstance(decision, Send) else None


@dataclass(frozen=True)
class FirstSend:
    """What a job's task does first when it starts by sending its first row (the usual
    case), worked out once per chunk from the job as read (`first_send`), for the chunk to
    do ahead of the tasks: the row, the message `_send` builds for it and when that is to
    become visible (a batch, `batch.py`), and the job advanced past it (the next row to
    write, `chunk._prewrite`; the advance itself, `chunk._advance_together`)."""

    job: JobRecord
    row: DueRow
    message: ExecutionMessage
    visible_at: datetime
    moved: JobRecord

    @property
    def next_row(self) -> datetime | None:
        """The next occurrence's row the advance needs (None: no next occurrence)."""
        return self.moved.next_execution_time


def first_send(ctx: TickContext, job: JobRecord, rows: list[DueRow]) -> FirstSend | None:
    """The job's `FirstSend` (None: its first row is not sent)."""
    planned = _first_send(ctx, job, rows)
    if planned is None:
        return None
    row, send = planned
    return FirstSend(job, row, _message(job, row, send), send.start, _advanced(job, row))


def advances_ahead(ctx: TickContext, plan: FirstSend) -> bool:
    """Whether the chunk may write `plan`'s advance before the task runs: only where the
    order of a tick's writes already holds without the task, its message sent in a batch
    (`sent_in_batches`) and its next row written (`prewritten`); otherwise its task
    advances it, as any other (and raises for a schedule that does not move on)."""
    nxt = plan.next_row
    if plan.message not in ctx.sent_in_batches:
        return False
    return nxt is None or (nxt > plan.row.due and (plan.job.key, nxt) in ctx.prewritten)


def _stale(ctx: TickContext, job: JobRecord, row: DueRow, stale: Stale, counts: Counts) -> None:
    """A row the job no longer waits for: finish a postponement a crash interrupted, make
    sure the occurrence the job does wait for has its row, and drop this one."""
    if stale.finish is not None:
        finish_interrupted_postponement(ctx, job, row, stale.finish, counts)
    elif stale.repair is not None:
        add_due(ctx.store, job.key, stale.repair)  # idempotent repair
    _drop(ctx, row, counts)


def _drop(ctx: TickContext, row: DueRow, counts: Counts) -> None:
    ctx.remove_row(row)
    counts.stale_dropped += 1
