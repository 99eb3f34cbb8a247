"""What one dispatcher tick shares with the code that handles each job, and what it counts.

Kept apart from `dispatch.py` so that the per-job modules (`dispatch_job`,
`dispatch_postpone`) and the tick itself can both import it without a cycle.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime

from scheduler_lib.config import Settings
from scheduler_lib.domain import JobRecord, JobState, split_job_key
from scheduler_lib.domain.outcomes import Observer, ignore
from scheduler_lib.errors import NotFoundError, PreconditionFailedError
from scheduler_lib.execution import ExecutionMessage, ExecutionQueue
from scheduler_lib.store import (
    DueRow,
    LostRace,
    TableStore,
    add_due,
    get_job,
    minute_key,
    put_job,
    remove_due,
    retry_lost_races,
)
from scheduler_lib.timeutil import Clock

#: Computes the advanced job from its current version; applied again after an ETag conflict.
Advance = Callable[[JobRecord], JobRecord]


@dataclass
class Counts:
    """Work done by one part of a tick; parts are summed into the `TickReport`."""

    job_entities_read: int = 0
    history_entities_read: int = 0
    #: Occurrences sent (execution messages), each counted by its job's task, lone or
    #: carried by a batch.
    messages_sent: int = 0
    #: Queue messages that took: one per lone message, one per batch (`batch.py`).
    queue_sends: int = 0
    parked_sent: int = 0
    postponed: int = 0
    stale_dropped: int = 0
    completed: int = 0

    def add(self, other: Counts) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


@dataclass(frozen=True)
class TickContext:
    """One tick's inputs, immutable: what a chunk learns (`prewritten`, the collections'
    states) makes a new context for that chunk (`dataclasses.replace`). `now` is the tick's
    start; `send_now()` reads the entry point's `clock` (None: a tick at a fixed instant), so
    that the visibility delay of a message sent late in a long tick is still measured from
    the moment it is sent, not from the start.

    A tick batches its due-index writes: it writes the rows of the next occurrences it
    expects in transactions first (`prewritten`: a job advanced to one of them needs no write
    of its own) and collects the rows it is done with (`remove_row`) to delete them in
    transactions afterwards (`take_removals`). Without `batched` (the API's `dispatch_now`)
    each row is removed at once. It batches its sends too (`sent_in_batches`), and the
    advances that follow them (`advanced_together`)."""

    store: TableStore
    queue: ExecutionQueue
    settings: Settings
    now: datetime
    through_minute: str  # last due-index partition read (look-ahead minute)
    collections_enabled: Mapping[str, bool] = field(default_factory=dict)
    clock: Clock | None = None
    batched: bool = False
    prewritten: frozenset[tuple[str, datetime]] = frozenset()
    #: Messages the chunk sent in batches before its jobs' tasks ran (`batch.py`): a task
    #: does not send one of these again.
    sent_in_batches: frozenset[ExecutionMessage] = frozenset()
    #: Jobs the chunk advanced together before their tasks ran (`chunk.py`), by job key and
    #: the occurrence they were advanced past: the ETag each was read with, and the job as
    #: written. A task whose job is that one takes it as its own advance.
    advanced_together: Mapping[tuple[str, datetime], tuple[str, JobRecord]] = field(
        default_factory=dict
    )
    #: Takes what the tick decides about occurrences (a postponement: `Outcome.MISSED`).
    observe: Observer = ignore
    _removals: list[DueRow] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def grace_cutoff(self) -> datetime:
        """Occurrences due before this instant were missed by downtime: postponed, not run."""
        return self.now - self.settings.grace_period

    def send_now(self) -> datetime:
        return self.clock() if self.clock is not None else self.now

    def in_range(self, due: datetime) -> bool:
        """Whether an occurrence falls in a minute this tick reads (so it handles it now)."""
        return minute_key(due) <= self.through_minute

    def remove_row(self, row: DueRow) -> None:
        """Drop a row this tick is done with: now, or with the tick's next batch."""
        if not self.batched:
            remove_due(self.store, row.row_key, row.due, etag=row.etag)
            return
        with self._lock:
            self._removals.append(row)

    def take_removals(self) -> list[DueRow]:
        """The rows collected for removal so far (and forget them)."""
        with self._lock:
            taken = list(self._removals)
            self._removals.clear()
        return taken

    def runnable(self, job: JobRecord | None) -> bool:
        """Whether the job may run at all: it exists, is Enabled, its collection is enabled."""
        if job is None or job.state != JobState.ENABLED:
            return False
        return self.collections_enabled.get(job.collection_key, False)


def read_job(ctx: TickContext, job_key: str, counts: Counts) -> JobRecord | None:
    """A point read of the job (None if deleted since its due-index row was written)."""
    counts.job_entities_read += 1
    sub, rg, coll, name = split_job_key(job_key)
    try:
        return get_job(ctx.store, sub, rg, coll, name)
    except NotFoundError:
        return None


def advance_job(
    ctx: TickContext, job: JobRecord, row: DueRow, counts: Counts, advance: Advance
) -> tuple[JobRecord | None, bool]:
    """Write the next occurrence's row, then apply `advance` to the job ETag-conditionally.

    Returns the job as stored and whether this tick's write won. On a conflict the job is
    re-read: if it is the same incarnation and still waits for `row.due` (someone changed
    only what the dispatcher does not own) `advance` is applied again; otherwise whoever
    changed it owns it now (the old row is left for the next tick to drop, so that a racing
    tick's unfinished postponement can still be finished). A job deleted and created again
    meanwhile is never advanced here: the message just sent carries the old incarnation,
    which the executor drops, so advancing the new one would lose its occurrence. On a win
    the caller removes the old row once it is done."""
    current = job

    def attempt() -> tuple[JobRecord | None, bool]:
        nonlocal current
        updated = advance(current)
        nxt = updated.next_execution_time
        if nxt is not None:
            if nxt <= row.due:
                raise RuntimeError(f"schedule of {current.key} does not move past {row.due}")
            if (current.key, nxt) not in ctx.prewritten:
                add_due(ctx.store, current.key, nxt)
        try:
            saved = put_job(ctx.store, updated, etag=current.etag)
        except PreconditionFailedError as exc:
            fresh = read_job(ctx, current.key, counts)
            if (
                fresh is not None
                and fresh.incarnation == job.incarnation
                and ctx.runnable(fresh)
                and fresh.next_execution_time == row.due
            ):
                current = fresh
                raise LostRace from exc
            return fresh, False
        return saved, True

    return retry_lost_races(attempt, what=f"Job '{job.key}'")
