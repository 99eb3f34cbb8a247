"""Dispatch one job at once when its next occurrence is already due, or due before the
next dispatcher tick would see it.

A tick reads the due index from its cursor to one minute ahead, so a job created (or
re-enabled) with an occurrence inside that window — "run now" jobs without a startTime, a
startTime a few seconds away — would otherwise wait for the next tick, up to a minute
late. The API calls `dispatch_if_due` right after it stores such a job. It runs the
dispatcher's own per-job step (`handle_rows`), so it is exactly as safe as two racing
ticks: the message's tag is derived from the occurrence, the advance is ETag-conditional,
and the executor runs a tag once. The due-index row was written first, so if anything here
fails the next tick still dispatches the occurrence. It reads nothing the API already holds:
the job as the API stored it (a stale ETag is handled as a tick handles one) and its
collection.
"""

from __future__ import annotations

from datetime import datetime

from scheduler_lib.config import Settings
from scheduler_lib.dispatch.context import Counts, TickContext
from scheduler_lib.dispatch.job import handle_rows
from scheduler_lib.dispatch.shard import LOOK_AHEAD
from scheduler_lib.domain import CollectionRecord, JobRecord, JobState
from scheduler_lib.execution import ExecutionQueue
from scheduler_lib.store import DueRow, TableStore, minute_key


def due_before_next_tick(job: JobRecord, *, now: datetime) -> bool:
    """Whether the job's next occurrence falls in a minute a tick at `now` would read."""
    due = job.next_execution_time
    return (
        job.state == JobState.ENABLED
        and due is not None
        and minute_key(due) <= minute_key(now + LOOK_AHEAD)
    )


def dispatch_if_due(
    store: TableStore,
    queue: ExecutionQueue,
    settings: Settings,
    job: JobRecord,
    collection: CollectionRecord,
    *,
    now: datetime,
) -> JobRecord | None:
    """Dispatch `job` (as stored, with its ETag) of `collection` now if the next tick would
    come too late for its next occurrence; returns the job as stored afterwards (advanced to
    its following occurrence), or None when nothing was dispatched."""
    due = job.next_execution_time
    if due is None or not due_before_next_tick(job, now=now):
        return None
    ctx = TickContext(
        store,
        queue,
        settings,
        now,
        minute_key(now + LOOK_AHEAD),
        collections_enabled={job.collection_key: collection.enabled},
    )
    counts = Counts()
    after = handle_rows(ctx, job, [DueRow(job.key, due, row_key=job.key)], counts)
    return after if counts.messages_sent else None
