"""The dead-man switch: a job with a dead-man window (its own, else its
collection's) that goes that long without a succeeded execution while it is Enabled and due
to have run becomes Overdue (`JobRecord.overdue_since`, the status's health) and one `Missed`
notice goes out; its next success clears it and sends `Recovered`.

Judged in the dispatcher's upkeep (`judge`, each tick) from the deadline index
(`store.due_deadlines`): a watched job has one row, at the instant it must have succeeded
by, so a tick reads only the rows whose instant has passed, at most `BUDGET` of them. A job
that turns out fine is re-armed at its last success plus the window (once per window per
job, however often it runs); an Overdue job is looked at again every `RECHECK` until it
recovers. Nothing is read for jobs that are not late. Rows are armed when a job is saved
(`arm_job`) or its collection's default changes (`arm_collection`).

"Due to have run": the job had an occurrence due since its last success (or since it was
armed): it ran and failed since then, or its next occurrence is already past. A weekly job
with a one-hour window is judged an hour after each occurrence, not every hour. Nothing of a
disabled collection runs: its jobs are looked at again a window later.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta

from scheduler_lib.domain import CollectionRecord, HistoryStatus, JobRecord, JobState
from scheduler_lib.domain.deadman import deadman_setting
from scheduler_lib.domain.messages import MAIN_ACTION
from scheduler_lib.errors import NotFoundError, PreconditionFailedError
from scheduler_lib.notify.notice import Notice, make_notice
from scheduler_lib.notify.rules import recovered
from scheduler_lib.store import (
    Deadline,
    LostRace,
    TableStore,
    arm_deadline,
    current_deadline,
    disarm_deadline,
    drop_deadline,
    due_deadlines,
    find_job,
    get_collection,
    list_history,
    list_notices,
    mark_overdue,
    put_job,
    retry_lost_races,
)
from scheduler_lib.store import jobs as job_store
from scheduler_lib.timeutil import iso_z
from scheduler_lib.wire.notifications import NotificationEvent as E

log = logging.getLogger("scheduler.deadman")

#: Deadlines judged per tick: more wait for the next tick (each costs a few reads).
BUDGET = 200
#: How often an Overdue job is looked at for its recovery.
RECHECK = timedelta(minutes=1)
#: Completed entries read to find the last success of the main action.
_SUCCESS_PAGE = 5

Send = Callable[[Notice], None]


def arm_job(
    store: TableStore, job: JobRecord, collection: CollectionRecord | None, now: datetime
) -> None:
    """Watch a job just saved (its window counted from `now`), or stop watching it."""
    span = deadman_setting(job, lambda: collection).duration
    if span is None or job.state != JobState.ENABLED:
        if current_deadline(store, job.key) is not None:
            disarm_deadline(store, job.key)
        return
    arm_deadline(store, job.key, now + span)


def arm_collection(store: TableStore, collection: CollectionRecord, now: datetime) -> int:
    """Arm (or disarm) every job of a collection whose default changed: O(its jobs)."""
    count, token = 0, None
    while True:
        jobs, token = job_store.list_jobs(
            store, collection.subscription_id, collection.resource_group, collection.name,
            continuation=token,
        )  # fmt: skip
        for job in jobs:
            arm_job(store, job, collection, now)
            count += 1
        if token is None:
            return count


def judge(store: TableStore, send: Send, *, now: datetime) -> int:
    """Judge the deadlines that have passed by `now` (at most `BUDGET`); how many."""
    collections: dict[str, CollectionRecord | None] = {}
    rows = due_deadlines(store, now=now, limit=BUDGET)
    for row in rows:
        try:
            _judge_one(store, row, send, now, collections)
        except Exception:
            log.exception("dead-man check of %s failed; the next tick tries again", row.job_key)
    return len(rows)


def _judge_one(
    store: TableStore,
    row: Deadline,
    send: Send,
    now: datetime,
    collections: dict[str, CollectionRecord | None],
) -> None:
    if current_deadline(store, row.job_key) != row.row_key:
        drop_deadline(store, row)  # left behind by a re-arm that did not finish
        return
    job = find_job(store, row.job_key)
    if job is None:
        disarm_deadline(store, row.job_key)
        mark_overdue(store, row.job_key, None)
        return
    if job.collection_key not in collections:
        collections[job.collection_key] = _collection(store, job)
    collection = collections[job.collection_key]
    span = deadman_setting(job, lambda: collection).duration
    if span is not None and collection is not None and not collection.enabled:
        arm_deadline(store, job.key, now + span)  # nothing runs: not due; looked at again
        return
    if span is None or job.state != JobState.ENABLED:
        if job.overdue_since is not None:
            _set_overdue(store, job.key, None)
        disarm_deadline(store, job.key)
        return
    success = last_success(store, job)
    if job.overdue_since is not None:
        if success is not None and success > job.overdue_since:
            _recover(store, job, success, send)
            arm_deadline(store, job.key, success + span)
        else:
            arm_deadline(store, job.key, now + RECHECK)
        return
    armed = max(job.created_time, _armed_from(row, span))
    since = success if success is not None and success >= armed else armed
    if now < since + span:
        arm_deadline(store, job.key, since + span)
        return
    if not _due_since(job, since, now, after_success=since is success):
        if job.next_execution_time is None:
            disarm_deadline(store, job.key)  # nothing left to run
        else:
            arm_deadline(store, job.key, max(job.next_execution_time, now) + span)
        return
    marked = _set_overdue(store, job.key, now)
    if marked is not None and marked.overdue_since == now:
        send(
            make_notice(
                E.MISSED, job.key, iso_z(now), now,
                f"No succeeded execution within {_span(span)} (last success: "
                f"{iso_z(success) if success else 'never'}).",
            )
        )  # fmt: skip
    arm_deadline(store, job.key, now + RECHECK)


def last_success(store: TableStore, job: JobRecord) -> datetime | None:
    """When the job's main action last succeeded, from its newest Completed entries."""
    entries, _ = list_history(
        store, job.history_key, status=HistoryStatus.COMPLETED, page_size=_SUCCESS_PAGE
    )
    ends = [e.end_time for e in entries if e.action_name == MAIN_ACTION]
    return max(ends) if ends else None


def _armed_from(row: Deadline, span: timedelta) -> datetime:
    """When the window of `row` began (its deadline less the window)."""
    return row.deadline - span


def _due_since(job: JobRecord, since: datetime, now: datetime, *, after_success: bool) -> bool:
    """Whether an occurrence was due since `since`: one ran (after the success that
    `since` is, or from the instant the window was armed), or the next one is past."""
    last = job.last_execution_time
    ran = last is not None and (last > since if after_success else last >= since)
    late = job.next_execution_time is not None and job.next_execution_time <= now
    return ran or late


def _recover(store: TableStore, job: JobRecord, success: datetime, send: Send) -> None:
    """Clear Overdue; send Recovered unless a Recovered was already recorded since."""
    overdue = job.overdue_since
    cleared = _set_overdue(store, job.key, None)
    if cleared is None or overdue is None:
        return
    if any(n.event == E.RECOVERED and n.time >= overdue for n in list_notices(store, job.key)):
        return
    send(recovered(job.key, success, "Succeeded again after being Overdue."))


def _set_overdue(store: TableStore, job_key: str, value: datetime | None) -> JobRecord | None:
    """Set (when not set) or clear `overdue_since`, ETag-guarded; the job as saved, None
    when there was nothing to change (someone else did it, or the job is gone)."""

    def attempt() -> JobRecord | None:
        job = find_job(store, job_key)
        if job is None or (value is not None) == (job.overdue_since is not None):
            return None
        try:
            return put_job(store, replace(job, overdue_since=value), etag=job.etag)
        except PreconditionFailedError:
            raise LostRace from None

    saved = retry_lost_races(attempt, what="The job's health")
    if saved is not None:
        mark_overdue(store, job_key, value)  # the overview's list of Overdue jobs
    return saved


def _collection(store: TableStore, job: JobRecord) -> CollectionRecord | None:
    try:
        return get_collection(store, job.subscription_id, job.resource_group, job.collection_name)
    except NotFoundError:
        return None


def _span(span: timedelta) -> str:
    minutes = int(span.total_seconds() // 60)
    return f"{minutes} minute(s)" if minutes < 120 else f"{minutes // 60} hour(s)"
