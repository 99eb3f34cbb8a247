"""One chunk of a dispatcher tick: up to `CHUNK` jobs (and parked messages), soonest first.

Per chunk: read its jobs (up to 14 of a collection in one query, the queries in
parallel), write the rows of the next occurrences they are expected to need in table
transactions, send the occurrences they are expected to send that become visible in the
same second as one queue message (`batch.py`), advance the jobs those batches carried the
message of in transactions (a collection's jobs together: `_advance_together`), handle
each job (`dispatch_read_job`: send what no batch carried, advance what was not advanced,
collect its old rows) or parked message, then delete the collected rows in transactions.
That saves three round trips per job over writing rows, jobs and deletions one by one, and
keeps the order that makes a tick safe: a job's message is sent and its next row exists
before the job points past it, and its old row goes only after it moved on. A failure of
any of these batches is not a failure of the tick: the jobs then write their own rows and
advance themselves, or the next tick drops the leftovers as stale.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime

from scheduler_lib.dispatch.batch import send_batches
from scheduler_lib.dispatch.context import Counts, TickContext
from scheduler_lib.dispatch.job import FirstSend, advances_ahead, dispatch_read_job, first_send
from scheduler_lib.domain import JobRecord
from scheduler_lib.errors import ValidationError
from scheduler_lib.execution import ExecutionMessage
from scheduler_lib.store import (
    TRANSACTION_LIMIT,
    DueRow,
    add_due_rows,
    find_jobs,
    remove_due_rows,
    replace_jobs,
)
from scheduler_lib.timeutil import iso_z

logger = logging.getLogger("scheduler_lib.dispatch.tick")

#: Jobs per chunk: as many as one transaction holds, if their rows share a minute.
CHUNK = TRANSACTION_LIMIT

#: A unit of work: a job's key and its rows, or None and one parked message's row.
Unit = tuple[str | None, list[DueRow]]
Task = tuple[list[DueRow], Callable[[], Counts]]
#: A job as read: None when it is gone, or the error reading it.
Read = JobRecord | Exception | None


def dispatch_chunk(
    ctx: TickContext, units: list[Unit], pool: ThreadPoolExecutor | None
) -> tuple[Counts, list[str]]:
    """Handle the units (with `pool`, in parallel); returns the work done and the minute of
    each unit that failed (its rows stay for the next tick)."""
    keys = [key for key, _ in units if key is not None]
    jobs = _read_jobs(ctx, keys, pool)
    counts, failed_minutes = Counts(job_entities_read=len(keys)), list[str]()
    plans = _first_sends(ctx, [(jobs[key], rows) for key, rows in units if key is not None])
    prewritten = _prewrite(ctx, plans)
    in_batches, counts.queue_sends = send_batches(ctx, plans, pool)
    ctx = replace(ctx, prewritten=prewritten, sent_in_batches=in_batches)
    ctx = replace(ctx, advanced_together=_advance_together(ctx, plans))
    tasks: list[Task] = [
        (rows, _bind(_task, ctx, jobs[key], rows) if key is not None else
         _bind(_send_parked, ctx, rows[0]))
        for key, rows in units
    ]  # fmt: skip
    outcomes = _run_all(pool, tasks) if pool is not None else _run_inline(tasks)
    for task_rows, outcome in outcomes:
        if isinstance(outcome, Counts):
            counts.add(outcome)
        else:
            first = min(task_rows, key=lambda r: r.due)
            logger.error(
                "dispatching failed; its minute is read again next tick",
                exc_info=outcome,
                extra={"job": first.job_key, "occurrence": iso_z(first.due)},
            )
            failed_minutes.append(min(r.minute for r in task_rows))
    _remove_handled(ctx)
    return counts, failed_minutes


def _read_jobs(
    ctx: TickContext, keys: list[str], pool: ThreadPoolExecutor | None
) -> dict[str, Read]:
    """The chunk's jobs, those of one collection 14 to a request (`store.find_jobs`: one
    request where each job's own read was one, docs/cost.md), the requests in parallel with
    `pool`; what reading a job raised is kept as its value, so that it fails alone."""
    return find_jobs(ctx.store, keys, run=pool.map if pool is not None else map)


def _task(ctx: TickContext, job: Read, rows: list[DueRow]) -> Counts:
    if isinstance(job, Exception):
        raise job
    return dispatch_read_job(ctx, job, rows)


def _first_sends(ctx: TickContext, jobs: list[tuple[Read, list[DueRow]]]) -> list[FirstSend]:
    """What each job read will do first, where it starts by sending its first row (the usual
    case; `job.first_send`), worked out once for the chunk's work ahead of the tasks. A job
    that cannot say (a definition that no longer parses) is left to its own task, which
    fails alone."""
    plans = []
    for job, rows in jobs:
        if not isinstance(job, JobRecord):
            continue
        try:
            plan = first_send(ctx, job, rows)
        except Exception:
            continue
        if plan is not None:
            plans.append(plan)
    return plans


def _prewrite(ctx: TickContext, plans: list[FirstSend]) -> frozenset[tuple[str, datetime]]:
    """Write, in transactions, the next-occurrence rows the jobs are expected to need (each
    job's row is still written before the job points at it); returns those written. If that
    fails, none: each job writes its own row as it advances."""
    expected = {(p.job.key, p.next_row) for p in plans if p.next_row is not None}
    try:
        add_due_rows(ctx.store, expected)
    except Exception:
        logger.warning("batched due-index write failed; writing row by row", exc_info=True)
        expected = set()
    return frozenset(expected)


def _advance_together(
    ctx: TickContext, plans: list[FirstSend]
) -> dict[tuple[str, datetime], tuple[str, JobRecord]]:
    """Advance together (`store.replace_jobs`: a transaction per collection, where each
    task's own write waited for a round of the few that overlapped it) the jobs whose task
    would only advance them past an occurrence a batch sent, their next row written
    (`job.advances_ahead`); each written one by job and occurrence, with the ETag it was
    read with. A job not written here (changed meanwhile, storage failing) is advanced by
    its task as before, which reads it again if it must."""
    ahead = [(p, p.job.etag) for p in plans if p.job.etag is not None and advances_ahead(ctx, p)]
    if not ahead:
        return {}
    try:
        written = replace_jobs(ctx.store, [(p.moved, etag) for p, etag in ahead])
    except Exception:
        logger.warning("advancing jobs together failed; each advances alone", exc_info=True)
        return {}
    return {
        (p.job.key, p.row.due): (etag, saved)
        for (p, etag), saved in zip(ahead, written, strict=True)
        if saved is not None
    }


def _remove_handled(ctx: TickContext) -> None:
    """Delete the rows the chunk is done with; if that fails they stay, and the next tick
    finds them stale and drops them."""
    try:
        remove_due_rows(ctx.store, ctx.take_removals())
    except Exception:
        logger.warning("batched due-index removal failed; next tick drops the rows", exc_info=True)


def _run_all(
    pool: ThreadPoolExecutor, tasks: list[Task]
) -> Iterable[tuple[list[DueRow], Counts | Exception]]:
    """Run the tasks; yield each one's Counts or its Exception. Anything that is not an
    Exception (a crash) cancels what has not started and propagates."""
    futures: list[tuple[list[DueRow], Future[Counts]]] = [
        (task_rows, pool.submit(fn)) for task_rows, fn in tasks
    ]
    try:
        for task_rows, future in futures:
            try:
                yield task_rows, future.result()
            except Exception as exc:
                yield task_rows, exc
    finally:
        for _, future in futures:
            future.cancel()


def _run_inline(
    tasks: list[Task],
) -> Iterable[tuple[list[DueRow], Counts | Exception]]:
    """`_run_all` in the calling thread, one task after the other (`workers=1`)."""
    for task_rows, fn in tasks:
        try:
            yield task_rows, fn()
        except Exception as exc:
            yield task_rows, exc


def _bind(fn: Callable[..., Counts], *args: object) -> Callable[[], Counts]:
    return lambda: fn(*args)


def _send_parked(ctx: TickContext, row: DueRow) -> Counts:
    """Send a parked retry as it is (its tag makes a repeat harmless), then drop its row."""
    counts = Counts()
    try:
        message = ExecutionMessage.from_json(row.payload or "")
    except ValidationError:
        logger.error(
            "dropping an unreadable parked message",
            extra={"job": row.job_key, "occurrence": iso_z(row.due)},
        )
        counts.stale_dropped += 1
    else:
        ctx.queue.send(message, visible_at=row.due, now=ctx.send_now())
        counts.parked_sent += 1
    ctx.remove_row(row)
    return counts
