"""Job use cases (API routes and dashboard alike): validation, quotas, scheduling, concurrency.

Every write is a read-modify-write conditioned on the ETag that was read (see
`context`), so concurrent PATCHes of different fields all land (none is lost).
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from typing import Any

from scheduler_lib.dispatch import dispatch_if_due
from scheduler_lib.domain import FINISHED_JOB_STATES, CollectionRecord, JobRecord, JobState
from scheduler_lib.errors import ConflictError, PreconditionFailedError, QuotaExceededError
from scheduler_lib.execution import ExecutionMessage, failure_streak
from scheduler_lib.notify import arm_job
from scheduler_lib.service import job_schedule
from scheduler_lib.service.context import (
    ApiContext,
    check_if_match,
    conditional_write,
    lost_race,
    read_for_write,
)
from scheduler_lib.store import (
    TableStore,
    add_due,
    history_purge_pending,
    remove_due,
    remove_incarnation_row,
    request_history_purge,
    retry_lost_races,
)
from scheduler_lib.store import collections as collection_store
from scheduler_lib.store import jobs as job_store
from scheduler_lib.wire import arm, jobs, original_form, quotas

log = logging.getLogger(__name__)

FINAL_STATES = FINISHED_JOB_STATES
FINISHED = "Job '{name}' is {state}: it can only be deleted, not changed."


@dataclass(frozen=True)
class JobName:
    subscription_id: str
    resource_group: str
    collection: str
    job: str

    def check(self) -> None:
        arm.check_names(self.subscription_id, self.resource_group, self.collection, self.job)


def get_job(ctx: ApiContext, name: JobName) -> JobRecord:
    name.check()
    return job_store.get_job(
        ctx.store, name.subscription_id, name.resource_group, name.collection, name.job
    )


def put_job(
    ctx: ApiContext, name: JobName, body: Any, client_etag: str | None, now: datetime
) -> tuple[JobRecord, bool]:
    """Create or replace a job; (record, created). Read in order in `_save`: the job as
    stored (`If-Match` checked), its collection, what the request makes of it
    (`job_schedule.plan`), the conditioned write, its due-index row, its dead-man deadline,
    an occurrence due before the next tick dispatched."""
    name.check()
    properties = jobs.split_body(body)
    return retry_lost_races(partial(_save, ctx, name, properties, client_etag, now))


def patch_job(
    ctx: ApiContext, name: JobName, body: Any, client_etag: str | None, now: datetime
) -> JobRecord:
    """Merge-patch a job's properties (see `jobs.merge_patch`)."""
    name.check()
    patch = jobs.split_body(body)

    def attempt() -> JobRecord:
        existing = get_job(ctx, name)
        _check_writable(existing, client_etag)
        merged, version = jobs.patched_properties(existing, patch, ctx.version)
        as_merged = replace(ctx, version=version)  # validated with what it stores
        return _save(as_merged, name, merged, client_etag, now, patching=existing)[0]

    return retry_lost_races(attempt)


def _check_writable(existing: JobRecord, client_etag: str | None) -> None:
    check_if_match(client_etag, existing.etag, f"Job '{existing.name}'")
    if existing.state in FINAL_STATES:
        raise ConflictError(FINISHED.format(name=existing.name, state=existing.state))


def _save(
    ctx: ApiContext,
    name: JobName,
    properties: Any,
    client_etag: str | None,
    now: datetime,
    *,
    patching: JobRecord | None = None,
) -> tuple[JobRecord, bool]:
    """One attempt of a PUT (it reads the job) or of a PATCH (`patching`: the job it read
    and merged onto); a `LostRace` when another write came first."""
    store = ctx.store
    parts = (name.subscription_id, name.resource_group, name.collection)
    existing = patching or read_for_write(
        partial(job_store.get_job, store, *parts, name.job), client_etag, "Job", name.job
    )
    if existing is not None and existing.state in FINAL_STATES:
        raise ConflictError(FINISHED.format(name=existing.name, state=existing.state))
    collection = collection_store.get_collection(store, *parts)
    planned = job_schedule.plan(ctx, properties, existing, collection, now)

    base = existing or JobRecord(
        subscription_id=name.subscription_id,
        resource_group=name.resource_group,
        collection_name=collection.name,
        name=name.job,
        definition=planned.definition,
        created_time=now,
        incarnation=uuid.uuid4().hex,
    )
    if existing is None and history_purge_pending(store, base.key):
        # The history of a deleted job of this name is still being purged: not ours to see.
        base = replace(base, history_partition=base.own_history_key())
    record = replace(
        base,
        definition=planned.definition,
        created_time=planned.created_time,
        state=planned.state,
        next_execution_time=planned.next_execution_time,
        bookkeeping=planned.bookkeeping,
        consecutive_failures=failure_streak(existing, planned.state),
        original_form=original_form.of(properties, dict(planned.definition.document)),
    )
    try:  # conditioned on the ETag read (`context.conditional_write`, written out)
        saved = job_store.put_job(
            store,
            record,
            etag=existing.etag if existing else None,
            create_only=existing is None,
            check_count=partial(quotas.check_job_count, planned.limits),
        )
    except QuotaExceededError:
        raise  # decided on what the write found (a full collection), not a lost race
    except (PreconditionFailedError, ConflictError) as exc:
        raise lost_race(client_etag, f"Job '{name.job}'") from exc
    reindex(store, existing, saved)
    arm_job(store, saved, collection, now)  # its dead-man deadline (notify)
    return dispatch_soon(ctx, saved, collection, now=now), existing is None


def dispatch_soon(
    ctx: ApiContext, job: JobRecord, collection: CollectionRecord, *, now: datetime
) -> JobRecord:
    """Hand an occurrence due before the next tick to the queue now (see `dispatch_now`).
    Its due-index row is already written, so on any failure the next tick dispatches it."""
    try:
        dispatched = dispatch_if_due(ctx.store, ctx.queue, ctx.settings, job, collection, now=now)
    except Exception:
        log.warning(
            "immediate dispatch failed; the next tick dispatches it",
            exc_info=True,
            extra={"job": job.key},
        )
        return job
    return dispatched or job


def reindex(store: TableStore, old: JobRecord | None, new: JobRecord) -> None:
    """Write the due-index row the dispatcher finds the job by; drop the previous one (a
    stale row is harmless, but dropping it saves the dispatcher a read)."""
    if new.state == JobState.ENABLED and new.next_execution_time is not None:
        add_due(store, new.key, new.next_execution_time, incarnation=new.incarnation)
    previous = old.next_execution_time if old else None
    moved = new.state != JobState.ENABLED or previous != new.next_execution_time
    if previous is not None and moved:
        remove_due(store, new.key, previous)


def delete_job(ctx: ApiContext, name: JobName, *, client_etag: str | None) -> None:
    """Delete a job; its history and due-index row follow (`purge`)."""

    def attempt() -> JobRecord:
        existing = get_job(ctx, name)
        check_if_match(client_etag, existing.etag, f"Job '{existing.name}'")
        # Requested before the job is gone, so a job created again under its name finds the
        # purge pending and keeps its history apart (a purge of a job that survives, because
        # this delete lost a race, is cancelled by the purge itself).
        request_history_purge(ctx.store, existing.history_key)
        with conditional_write(client_etag, f"Job '{existing.name}'"):
            job_store.delete_job(ctx.store, existing, etag=existing.etag)
        return existing

    record = retry_lost_races(attempt)
    purge(ctx, record, history_requested=True)


def purge(ctx: ApiContext, record: JobRecord, *, history_requested: bool = False) -> None:
    """What a deleted job leaves behind: its history, deleted in the background (a job with
    20,000 entries took 70 s to delete in the request), and its due-index row, removed only
    if it is provably this incarnation's (a job created again under the same name meanwhile
    keeps its own; see `remove_incarnation_row`)."""
    if not history_requested:
        request_history_purge(ctx.store, record.history_key)
    if record.next_execution_time is not None:
        remove_incarnation_row(
            ctx.store, record.key, record.next_execution_time, record.incarnation
        )


def run_job(ctx: ApiContext, name: JobName, *, now: datetime) -> JobRecord:
    """Queue a manual execution now, outside the schedule; the executor runs it."""
    record = get_job(ctx, name)
    message = ExecutionMessage.manual_run(record.key, now=now, incarnation=record.incarnation)
    ctx.queue.send(message, visible_at=now, now=now)
    return record
