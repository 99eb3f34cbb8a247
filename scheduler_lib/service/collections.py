"""Job collection use cases (the API's routes and the dashboard's buttons call them).

Deleting a collection deletes its jobs (with their history and due-index rows) first, then
the collection, synchronously: the SDK's poller accepts the 200 as done. Changing a
collection's SKU or quota is refused (409) when its existing jobs would break the new limits,
because the rule must hold for every job, not only for the next one created.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from scheduler_lib.domain import CollectionRecord, JobRecord
from scheduler_lib.errors import NotFoundError, PreconditionFailedError, QuotaExceededError
from scheduler_lib.notify import arm_collection, check_destinations, watched_default_changed
from scheduler_lib.service.context import ApiContext, check_if_match, conditional_write, current
from scheduler_lib.service.jobs import purge
from scheduler_lib.service.resumed import resume_jobs
from scheduler_lib.store import collections as collection_store
from scheduler_lib.store import jobs as job_store
from scheduler_lib.store import retry_lost_races
from scheduler_lib.wire import arm, collections, notifications, quotas, signing


@dataclass(frozen=True)
class CollectionName:
    subscription_id: str
    resource_group: str
    collection: str

    def check(self) -> None:
        arm.check_names(self.subscription_id, self.resource_group, self.collection)


def get_collection(ctx: ApiContext, name: CollectionName) -> CollectionRecord:
    name.check()
    return collection_store.get_collection(
        ctx.store, name.subscription_id, name.resource_group, name.collection
    )


def list_collections(
    ctx: ApiContext, subscription_id: str, resource_group: str | None
) -> list[CollectionRecord]:
    arm.check_names(subscription_id, resource_group or "rg")
    return collection_store.list_collections(ctx.store, subscription_id, resource_group)


def put_collection(
    ctx: ApiContext,
    name: CollectionName,
    body: Any,
    client_etag: str | None,
    now: datetime,
) -> tuple[CollectionRecord, bool, dict[str, str]]:
    """Create or replace a collection; (record, created, signing secrets it generated)."""
    name.check()
    location, tags, properties = collections.normalize_body(body, ctx.version)
    collections.complete(properties)  # its quota checks before the collection is read
    check_destinations(properties, ctx.settings)

    def attempt() -> tuple[CollectionRecord, bool, dict[str, str]]:
        existing = current(lambda: get_collection(ctx, name))
        if existing is None and client_etag is not None:
            raise PreconditionFailedError(
                f"Job collection '{name.collection}' does not exist (If-Match was given)."
            )
        stored = existing.properties if existing else None
        complete = collections.complete(signing.carry_over(stored, properties, now))
        notifications.carry_over(complete, stored)
        record = CollectionRecord(
            subscription_id=existing.subscription_id if existing else name.subscription_id,
            resource_group=existing.resource_group if existing else name.resource_group,
            name=existing.name if existing else name.collection,
            location=location,
            tags=tags or {},
            properties=complete,
        )
        saved = _write(ctx, existing, record, client_etag, now=now)
        return saved, existing is None, signing.generated(properties, saved.properties)

    return retry_lost_races(attempt)


def patch_collection(
    ctx: ApiContext,
    name: CollectionName,
    body: Any,
    client_etag: str | None,
    now: datetime,
) -> tuple[CollectionRecord, dict[str, str]]:
    """Change the given parts of a collection (quota merged field by field); (record,
    signing secrets it generated)."""
    name.check()
    location, tags, properties = collections.normalize_body(body, ctx.version)
    check_destinations(properties, ctx.settings)

    def attempt() -> tuple[CollectionRecord, dict[str, str]]:
        existing = get_collection(ctx, name)
        given = signing.carry_over(existing.properties, properties, now)
        notifications.carry_over(given, existing.properties)
        merged = collections.complete(collections.merge(existing.properties, given))
        record = replace(
            existing,
            location=location if location is not None else existing.location,
            tags=tags if tags is not None else existing.tags,
            properties=merged,
        )
        saved = _write(ctx, existing, record, client_etag, now=now)
        return saved, signing.generated(properties, saved.properties)

    return retry_lost_races(attempt)


def set_state(
    ctx: ApiContext,
    name: CollectionName,
    state: str,
    *,
    client_etag: str | None,
    now: datetime,
) -> CollectionRecord:
    """Enable or disable a collection (the dispatcher skips the jobs of a disabled one)."""
    name.check()

    def attempt() -> CollectionRecord:
        existing = get_collection(ctx, name)
        record = replace(existing, properties={**existing.properties, "state": state})
        return _write(ctx, existing, record, client_etag, now=now)

    return retry_lost_races(attempt)


def _write(
    ctx: ApiContext,
    existing: CollectionRecord | None,
    record: CollectionRecord,
    client_etag: str | None,
    *,
    now: datetime,
) -> CollectionRecord:
    """Write the collection; one enabled again reschedules its jobs from `now` (the
    request's instant, read once by the route)."""
    what = f"Job collection '{record.name}'"
    if existing is not None:
        check_if_match(client_etag, existing.etag, what)
        _check_existing_jobs(ctx, record)
    with conditional_write(client_etag, what):
        saved = collection_store.put_collection(
            ctx.store,
            record,
            etag=existing.etag if existing else None,
            create_only=existing is None,
        )
    if existing is not None and not existing.enabled and saved.enabled:
        resume_jobs(ctx, saved, now=now)
    if existing is not None and watched_default_changed(existing, saved):
        arm_collection(ctx.store, saved, now)  # its jobs' dead-man deadlines (notify)
    return saved


def _check_existing_jobs(ctx: ApiContext, record: CollectionRecord) -> None:
    limits = quotas.effective_limits(record.properties)
    count = job_store.count_jobs(ctx.store, record.key)
    if count > limits.max_job_count:
        raise QuotaExceededError(
            f"The job collection holds {count} jobs; the new SKU or quota allows "
            f"{limits.max_job_count}. Delete jobs first."
        )
    if record.properties["sku"]["name"] == "Free":
        for job in all_jobs(ctx, record):
            quotas.check_sku_features("Free", job.definition)


def all_jobs(
    ctx: ApiContext, record: CollectionRecord, state: str | None = None
) -> list[JobRecord]:
    """Every job of a collection (with `state`: only those), a page of 1,000 at a time; a
    collection holds at most its quota. Also the dashboard's search and timeline."""
    found: list[JobRecord] = []
    token = None
    while True:
        page, token = job_store.list_jobs(
            ctx.store,
            record.subscription_id,
            record.resource_group,
            record.name,
            state=state,
            page_size=1000,
            continuation=token,
        )
        found += page
        if token is None:
            return found


def delete_collection(ctx: ApiContext, name: CollectionName, *, client_etag: str | None) -> None:
    """Delete a collection with all its jobs."""
    existing = get_collection(ctx, name)
    check_if_match(client_etag, existing.etag, f"Job collection '{existing.name}'")
    for job in all_jobs(ctx, existing):
        try:
            job_store.delete_job(ctx.store, job)
        except NotFoundError:
            continue
        purge(ctx, job)
    try:
        collection_store.delete_collection(ctx.store, existing, etag=existing.etag)
    except PreconditionFailedError:
        if client_etag is not None:
            raise
        collection_store.delete_collection(ctx.store, existing)
