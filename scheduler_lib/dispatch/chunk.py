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
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime
from typing import TypeVar

from scheduler_lib.dispatch.batch import send_batches
from scheduler_lib.dispatch.context import Counts, TickContext
from scheduler_lib.dispatch.job import dispatch_read_job, expected_advance, expected_next_row
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

T = TypeVar("T")

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
    read = [(jobs[key], rows) for key, rows in units if key is not None]
    prewritten = _prewrite(ctx, read)
    in_batches, counts.queue_sends = send_batches(ctx, read, pool)
    ctx = replace(ctx, prewritten=prewritten, sent_in_batches=in_batches)
    ctx = replace(ctx, advanced_together=_advance_together(ctx, read))
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


def _expected(
    ctx: TickContext,
    jobs: list[tuple[Read, list[DueRow]]],
    expect: Callable[[TickContext, JobRecord, list[DueRow]], T | None],
) -> Iterator[tuple[JobRecord, T]]:
    """Each job read and what `expect` says its task will do first, where that is the usual
    case (not None). A job `expect` raises for (a definition that no longer parses) is left
    to its own task, which fails alone."""
    for job, rows in jobs:
        if not isinstance(job, JobRecord):
            continue
        try:
            expected = expect(ctx, job, rows)
        except Exception:
            continue
        if expected is not None:
            yield job, expected


def _prewrite(
    ctx: TickContext, jobs: list[tuple[Read, list[DueRow]]]
) -> frozenset[tuple[str, datetime]]:
    """Write, in transactions, the next-occurrence rows the jobs are expected to need (each
    job's row is still written before the job points at it); returns those written. If that
    fails, none: each job writes its own row as it advances."""
    expected = {(job.key, nxt) for job, nxt in _expected(ctx, jobs, expected_next_row)}
    try:
        add_due_rows(ctx.store, expected)
    except Exception:
        logger.warning("batched due-index write failed; writing row by row", exc_info=True)
        expected = set()
    return frozenset(expected)


def _advance_together(
    ctx: TickContext, jobs: list[tuple[Read, list[DueRow]]]
) -> dict[tuple[str, datetime], tuple[str, JobRecord]]:
    """Advance together (`store.replace_jobs`: a transaction per collection, where each
    task's own write waited for a round of the few that overlapped it) the jobs whose task
    would only advance them past an occurrence a batch sent, their next row written
    (`expected_advance`); each written one by job and occurrence, with the ETag it was read
    with. A job not written here (changed meanwhile, storage failing) is advanced by its
    task as before, which reads it again if it must."""
    planned = [
        (job, job.etag, due, moved)
        for job, (due, moved) in _expected(ctx, jobs, expected_advance)
        if job.etag is not None
    ]
    if not planned:
        return {}
    try:
        written = replace_jobs(ctx.store, [(moved, etag) for _, etag, _, moved in planned])
    except Exception:
        logger.warning("advancing jobs together failed; each advances alone", exc_info=True)
        return {}
    return {
        (job.key, due): (etag, saved)
        for (job, etag, due, _), saved in zip(planned, written, strict=True)
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
