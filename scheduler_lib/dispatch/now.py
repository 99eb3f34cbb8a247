"""Dispatch one job at once when its next occurrence is already due, or due before the
next dispatcher tick would see it.

A tick reads the due index from its cursor to one minute ahead, so a job created (or
re-enabled) with an occurrence inside that window — "run now" jobs without a startTime, a
startTime a few seconds away — would otherwise wait for the next tick, up to a minute
late. The API calls `dispatch_if_due` right after it stores such a job. It runs the
dispatcher's own per-job step (`dispatch_job`), so it is exactly as safe as two racing
ticks: the message's tag is derived from the occurrence, the advance is ETag-conditional,
and the executor runs a tag once. The due-index row was written first, so if anything here
fails the next tick still dispatches the occurrence.
"""

from __future__ import annotations

from datetime import datetime

from scheduler_lib.config import Settings
from scheduler_lib.dispatch.context import TickContext
from scheduler_lib.dispatch.job import dispatch_job
from scheduler_lib.dispatch.tick import LOOK_AHEAD
from scheduler_lib.domain import JobRecord, JobState
from scheduler_lib.errors import NotFoundError
from scheduler_lib.execution import ExecutionQueue
from scheduler_lib.store import DueRow, TableStore, get_collection, get_job, minute_key


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
    *,
    now: datetime,
) -> JobRecord | None:
    """Dispatch `job`'s next occurrence now if the next tick would come too late for it;
    returns the job as stored afterwards (advanced to its following occurrence), or None
    when nothing was dispatched."""
    due = job.next_execution_time
    if due is None or not due_before_next_tick(job, now=now):
        return None
    try:
        collection = get_collection(
            store, job.subscription_id, job.resource_group, job.collection_name
        )
    except NotFoundError:
        return None
    ctx = TickContext(
        store,
        queue,
        settings,
        now,
        minute_key(now + LOOK_AHEAD),
        collections_enabled={job.collection_key: collection.enabled},
    )
    row = DueRow(job.key, due, row_key=job.key)
    counts = dispatch_job(ctx, job.key, [row])
    if counts.messages_sent == 0:
        return None
    return get_job(store, job.subscription_id, job.resource_group, job.collection_name, job.name)
