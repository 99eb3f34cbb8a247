"""A collection enabled again: its jobs rescheduled, and what each does about the occurrences
it missed meanwhile.

While a collection is Disabled or Suspended, the dispatcher drops its jobs' due rows and
runs nothing; enabled again, each job continues at its next occurrence after now
(`resume_jobs`). The occurrences in between were missed on purpose, but for the job they are
missed all the same, so its missed-run policy decides, exactly as after downtime
(`wire/missed.missed_runs`, the one decision): Skip (the default) runs none of them,
RunLatest the latest one, once, RunAll those inside its catch-up window, at most 50. Never the
burst of every missed occurrence; each late run is marked [CatchUp] in history, carries its
occurrence's execution tag and does not count towards `recurrence.count`.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from scheduler_lib.dispatch import send_missed
from scheduler_lib.domain import CollectionRecord, JobRecord, JobState
from scheduler_lib.errors import PreconditionFailedError
from scheduler_lib.execution import ExecutionMessage, ExecutionQueue
from scheduler_lib.schedule import Schedule
from scheduler_lib.service.context import ApiContext
from scheduler_lib.service.job_schedule import resume, schedule_of
from scheduler_lib.service.jobs import dispatch_soon, reindex
from scheduler_lib.store import LostRace, retry_lost_races
from scheduler_lib.store import jobs as job_store
from scheduler_lib.wire.missed import missed_runs


def run_missed(
    queue: ExecutionQueue, job: JobRecord, schedule: Schedule, *, now: datetime
) -> list[ExecutionMessage]:
    """Queue the late runs `job`'s policy asks for, of its occurrences from its stored next
    execution (the first one missed) until just before `now` (an occurrence at `now` is
    still the job's next one, not a missed one)."""
    first = job.next_execution_time
    if first is None or first >= now:
        return []
    runs = missed_runs(job, schedule, first, now=now - timedelta(microseconds=1))
    return send_missed(queue, job, runs, now=now)


def resume_jobs(ctx: ApiContext, collection: CollectionRecord, *, now: datetime) -> int:
    """Reschedule the Enabled jobs of a collection that was just enabled again.

    While it was disabled, ticks dropped its jobs' due-index rows (a row of a disabled
    collection is stale), so each job gets its next execution from `now` (missed ones run
    late only as its missed-run policy says, `service.resumed`), a new row, and an immediate
    dispatch when that is due before the next tick. Returns how many jobs it rescheduled."""
    resumed, token = 0, None
    while True:
        where = (collection.subscription_id, collection.resource_group, collection.name)
        page, token = job_store.list_jobs(
            ctx.store, *where, state=JobState.ENABLED, continuation=token
        )
        for job in page:
            resumed += _resume_job(ctx, job, collection, now=now)
        if token is None:
            return resumed


def _resume_job(
    ctx: ApiContext, job: JobRecord, collection: CollectionRecord, *, now: datetime
) -> int:
    current = job

    def attempt() -> int:
        nonlocal current
        if current.state != JobState.ENABLED:
            return 0
        schedule = schedule_of(current.definition, current.created_time)
        next_time = resume(schedule, current.bookkeeping, now)
        updated = replace(
            current,
            next_execution_time=next_time,
            state=JobState.COMPLETED if next_time is None else current.state,
        )
        try:
            saved = job_store.put_job(ctx.store, updated, etag=current.etag)
        except PreconditionFailedError as exc:
            fresh = job_store.find_job(ctx.store, current.key)
            if fresh is None:
                return 0
            current = fresh
            raise LostRace from exc
        reindex(ctx.store, current, saved)
        run_missed(ctx.queue, current, schedule, now=now)  # its missed-run policy decides
        dispatch_soon(ctx, saved, collection, now=now)
        return 1

    return retry_lost_races(attempt, what=f"Job '{job.name}'")
