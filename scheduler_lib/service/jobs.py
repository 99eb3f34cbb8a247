"""Job use cases (API routes and dashboard alike): validation, quotas, scheduling, concurrency.

Every write is a read-modify-write conditioned on the ETag that was read (see
`concurrency`), so concurrent PATCHes of different fields all land (none is lost).
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from scheduler_lib.actions import destinations
from scheduler_lib.actions.client_certificate import describe_certificate
from scheduler_lib.dispatch import dispatch_if_due
from scheduler_lib.domain import FINISHED_JOB_STATES, CollectionRecord, JobRecord, JobState
from scheduler_lib.errors import ConflictError, PreconditionFailedError
from scheduler_lib.execution import ExecutionMessage, failure_streak
from scheduler_lib.notify import arm_job, check_destinations
from scheduler_lib.service.concurrency import check_if_match, conditional_write, current, retrying
from scheduler_lib.service.context import ApiContext
from scheduler_lib.service.job_schedule import (
    restarted,
    resume,
    schedule_of,
    steady_sample,
)
from scheduler_lib.store import (
    add_due,
    history_purge_pending,
    remove_due,
    remove_incarnation_row,
    request_history_purge,
)
from scheduler_lib.store import collections as collection_store
from scheduler_lib.store import jobs as job_store
from scheduler_lib.wire import arm, jobs, notifications, original_form, quotas, secrets

log = logging.getLogger(__name__)

FINAL_STATES = FINISHED_JOB_STATES


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
    """Create or replace a job; (record, created)."""
    name.check()
    properties = jobs.split_body(body)

    def attempt() -> tuple[JobRecord, bool]:
        existing = current(lambda: get_job(ctx, name))
        return _save(ctx, name, properties, existing, client_etag=client_etag, now=now)

    return retrying(attempt)


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
        return _save(as_merged, name, merged, existing, client_etag=client_etag, now=now)[0]

    return retrying(attempt)


def _check_writable(existing: JobRecord, client_etag: str | None) -> None:
    check_if_match(client_etag, existing.etag, f"Job '{existing.name}'")
    if existing.state in FINAL_STATES:
        raise ConflictError(
            f"Job '{existing.name}' is {existing.state}: it can only be deleted, not changed."
        )


def _save(
    ctx: ApiContext,
    name: JobName,
    properties: Any,
    existing: JobRecord | None,
    *,
    client_etag: str | None,
    now: datetime,
) -> tuple[JobRecord, bool]:
    if existing is None and client_etag is not None:
        raise PreconditionFailedError(f"Job '{name.job}' does not exist (If-Match was given).")
    if existing is not None:
        _check_writable(existing, client_etag)
    collection = collection_store.get_collection(
        ctx.store, name.subscription_id, name.resource_group, name.collection
    )

    def complete(document: dict[str, Any]) -> None:
        if existing is not None:  # the stored JSON: a secret is carried over as it is stored
            secrets.carry_over(document["action"], existing.definition.document.get("action"))
        # Always: on a create, a masked notification URL names nothing stored (a 400).
        notifications.carry_over(document, existing.definition.document if existing else None)
        secrets.finalize(document["action"], describe_certificate)
        destinations.check_definition(document["action"], ctx.settings)
        check_destinations(document, ctx.settings)  # notifications' URLs, as the action's

    definition, state = jobs.parse_job(properties, ctx.version, complete=complete)
    jobs.check_size(definition)
    sku = collection.properties.get("sku", {}).get("name", "Standard")
    quotas.check_sku_features(sku, definition)
    limits = quotas.effective_limits(collection.properties)

    same_timing = existing is not None and existing.definition.timing_key == definition.timing_key
    created_time = existing.created_time if same_timing and existing else now
    schedule = schedule_of(definition, created_time)
    quotas.check_job_recurrence(limits, definition, steady_sample(definition, schedule))
    bookkeeping = existing.bookkeeping if same_timing and existing else restarted(existing)
    if not same_timing or existing is None:
        next_time = schedule.first()
        nothing_left = next_time is None
    elif existing.state == JobState.DISABLED and state == JobState.ENABLED:
        next_time = resume(schedule, bookkeeping, now)
        nothing_left = next_time is None
    else:
        # Unchanged timing: a job without a next execution may still have its final
        # occurrence in flight; the executor marks it Completed or Faulted when it ends.
        next_time = existing.next_execution_time
        nothing_left = False
    if nothing_left:
        state = JobState.COMPLETED

    base = existing or JobRecord(
        subscription_id=name.subscription_id,
        resource_group=name.resource_group,
        collection_name=collection.name,
        name=name.job,
        definition=definition,
        created_time=now,
        incarnation=uuid.uuid4().hex,
    )
    if existing is None and history_purge_pending(ctx.store, base.key):
        # The history of a deleted job of this name is still being purged: not ours to see.
        base = replace(base, history_partition=base.own_history_key())
    record = replace(
        base,
        definition=definition,
        created_time=created_time,
        state=state,
        next_execution_time=next_time,
        bookkeeping=bookkeeping,
        consecutive_failures=failure_streak(existing, state),
        original_form=original_form.of(properties, dict(definition.document)),
    )
    with conditional_write(client_etag, f"Job '{name.job}'"):
        saved = job_store.put_job(
            ctx.store,
            record,
            etag=existing.etag if existing else None,
            create_only=existing is None,
            check_count=lambda count: quotas.check_job_count(limits, count),
        )
    reindex(ctx, existing, saved)
    arm_job(ctx.store, saved, collection, now)  # its dead-man deadline (notify)
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


def reindex(ctx: ApiContext, old: JobRecord | None, new: JobRecord) -> None:
    """Write the due-index row the dispatcher finds the job by; drop the previous one (a
    stale row is harmless, but dropping it saves the dispatcher a read)."""
    if new.state == JobState.ENABLED and new.next_execution_time is not None:
        add_due(ctx.store, new.key, new.next_execution_time, incarnation=new.incarnation)
    previous = old.next_execution_time if old else None
    moved = new.state != JobState.ENABLED or previous != new.next_execution_time
    if previous is not None and moved:
        remove_due(ctx.store, new.key, previous)


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

    record = retrying(attempt)
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
