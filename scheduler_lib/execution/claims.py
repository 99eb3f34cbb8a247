"""The executor's reads and writes of the job entity around one attempt, each an ETag loop.

`claim` takes an attempt before it runs (or says why it must not run); `finish` applies its
result afterwards. Both re-read and re-apply on a conflicting write (the dispatcher, the API or
another worker changed the job meanwhile), so no one's change is lost; what to do is
`decide`'s, the changes themselves are the pure functions of `lifecycle`.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NamedTuple

from scheduler_lib.concurrent_calls import ConcurrentCalls
from scheduler_lib.domain import CollectionRecord, JobRecord
from scheduler_lib.domain.history_counter import HistoryCounter
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.errors import NotFoundError, PreconditionFailedError
from scheduler_lib.execution import decide, lifecycle
from scheduler_lib.execution.decide import Skip
from scheduler_lib.execution.lease import Takeover
from scheduler_lib.shared_reads import SharedReads
from scheduler_lib.store import (
    LostRace,
    TableStore,
    find_job,
    find_jobs,
    get_collection,
    put_job,
    retry_lost_races,
)

log = logging.getLogger(__name__)

#: One worker's collection reads, by (subscription, resource group, name) in lower case.
CollectionReads = SharedReads[tuple[str, ...], CollectionRecord]


class Known(NamedTuple):
    """A batch member's job as its batch read it (`member_reads`), and the job's collection
    when the batch read that too (None: the claim reads it, through the shared reads)."""

    job: JobRecord
    collection: CollectionRecord | None = None


class Claimed(NamedTuple):
    """A claimed attempt: the job as the claim wrote it, the verdict, the collection as the
    claim read it (an attempt takes its signing secrets from it, rather than reading the
    collection again), and what the attempt does next (`decide.before_run`, on the same
    read) with the type of its action (metrics' label).

    When `next` is a `decide.Wait` (an early delivery, `claim(..., hold=True)`), nothing is
    written yet: `record` is the job as read, and `claim(..., early=...)` at the second
    writes the claim conditional on that read."""

    record: JobRecord
    verdict: decide.Verdict
    collection: CollectionRecord
    next: decide.Postpone | decide.Wait | decide.Start | decide.NoAction | None = None
    action_type: str | None = None


@dataclass(frozen=True)
class Attempt:
    """What `finish` needs to know about an attempt that ran."""

    succeeded: bool
    started: datetime
    faulted_now: bool
    final: bool
    #: The history counter as the attempt's entry left it (the job's next snapshot), if known.
    history: HistoryCounter | None = None


def claim(
    store: TableStore,
    message: ExecutionMessage,
    message_id: str,
    *,
    now: datetime,
    takeover: Takeover | None = None,
    grace: timedelta | None = None,
    hold: bool = False,
    early: Claimed | None = None,
    collections: CollectionReads | None = None,
    known: Known | None = None,
) -> Claimed | Skip:
    """Claim the attempt (ETag loop), or say why it is not run (`decide.runnable`,
    `decide.admit`). `takeover`: a watchdog's, for the step's expired lease (`lease`);
    `grace`: the grace period, to decide what the claimed attempt does next with it.

    `hold`: an attempt that is to wait for its second (`decide.Wait`) is decided but not
    written: its claim is taken at the second, `early` being that decision. The write is
    then conditional on the job as read before the wait, so its success proves nothing
    changed meanwhile (one request: the read is not repeated); a conflict (the job deleted,
    created again, disabled, replaced, or claimed by a duplicate) reads and decides again
    as a fresh delivery at that instant would. The collection is the one read before the
    wait unless the job changed. `collections`: the worker's shared collection reads
    (`shared_reads`; claims of one collection at once send one read). `known`: the job as
    its batch read it, with its collection (`member_reads`), for the first decision in place
    of reads of its own; the claim's write is conditional on its ETag, so a job changed since
    is read again."""

    def attempt() -> Claimed | Skip:
        nonlocal early, known
        read, early = early, None  # the read before the wait serves one write only
        if read is None:
            found = _runnable(store, message, now=now, collections=collections, known=known)
            known = None  # as `early`: it serves the first attempt only
            if found is None:
                raise LostRace
            if isinstance(found, Skip):
                return found
            record, collection = found
            verdict = decide.admit(record, message, message_id, takeover)
            if isinstance(verdict, Skip):
                return verdict
        else:
            record, verdict, collection = read.record, read.verdict, read.collection
        following = None
        if grace is not None:
            following = decide.before_run(record, collection, message, now=now, grace=grace)
        kind = decide.action_type(record, message)
        if hold and isinstance(following, decide.Wait):
            return Claimed(record, verdict, collection, following, kind)  # claimed at its second
        claimed = lifecycle.with_claim(record, message, message_id, now=now)
        try:
            saved = put_job(store, claimed, etag=record.etag)
        except (PreconditionFailedError, NotFoundError) as exc:
            raise LostRace from exc
        return Claimed(saved, verdict, collection, following, kind)

    return retry_lost_races(attempt, what=f"Job '{message.job_key}'")


def member_reads(
    store: TableStore,
    messages: Sequence[ExecutionMessage],
    collections: CollectionReads,
    pool: ConcurrentCalls,
) -> dict[str, Known]:
    """The jobs of a batch's members (not its watchdogs: a look reads its job itself), 14 of
    a collection to a request (`store.find_jobs`) where each member read its own, and once
    each collection two or more of them share, where each member's claim read it, or joined
    a read under way (`shared_reads`: members that start apart each sent one; docs/
    cost.md). `pool` sends those collection reads at once (the worker's member threads). A job
    not found or not read is left out, and so is a collection: its member reads it."""
    keys = {message.job_key for message in messages if not message.watchdog}
    if len(keys) < 2:
        return {}
    found = find_jobs(store, keys)
    jobs = {key: job for key, job in found.items() if isinstance(job, JobRecord)}
    collection_of = {key: _collection_key(job) for key, job in jobs.items()}
    shared = Counter(collection_of.values())
    names = [name for name, members in shared.items() if members > 1]
    read = pool.run_all(
        [functools.partial(_batch_collection, store, collections, name) for name in names]
    )
    kept = {
        name: collection
        for name, collection in zip(names, read, strict=True)
        if isinstance(collection, CollectionRecord)
    }
    return {key: Known(job, kept.get(collection_of[key])) for key, job in jobs.items()}


def _collection_names(record: JobRecord) -> tuple[str, str, str]:
    """The job's collection: subscription, resource group and name, as the user wrote them."""
    return (record.subscription_id, record.resource_group, record.collection_name)


def _collection_key(record: JobRecord) -> tuple[str, ...]:
    """The job's collection as `CollectionReads` keys it."""
    return tuple(name.lower() for name in _collection_names(record))


def _batch_collection(
    store: TableStore, collections: CollectionReads, name: tuple[str, ...]
) -> CollectionRecord | None:
    """A collection for a batch's members, or None (not there, or not read: each member's
    claim reads it again and sees for itself)."""
    try:
        return collections.read(name, functools.partial(get_collection, store, *name))
    except Exception:  # storage failing now, or the collection gone: the members' to see
        log.debug("a batch's read of collection %s failed", "/".join(name), exc_info=True)
        return None


def _runnable(
    store: TableStore,
    message: ExecutionMessage,
    *,
    now: datetime,
    collections: CollectionReads | None = None,
    known: Known | None = None,
) -> tuple[JobRecord, CollectionRecord] | Skip | None:
    """The job as `message` may run against it (`known`, else read now) and its collection,
    or why it may not (its occurrence then marked abandoned); None when that mark lost a race
    (read again)."""
    record = known.job if known is not None else find_job(store, message.job_key)
    collection = None
    if record is not None and message.belongs_to(record.incarnation):
        collection = known.collection if known is not None else None
        if collection is None:
            read = functools.partial(get_collection, store, *_collection_names(record))
            with contextlib.suppress(NotFoundError):  # None: the collection is gone
                collection = (
                    read()
                    if collections is None
                    else collections.read(_collection_key(record), read)
                )
    runnable = decide.runnable(record, collection, message)
    if not isinstance(runnable, Skip):
        return runnable
    if runnable.abandon and record is not None:
        stale = lifecycle.abandoned(record, message, now=now)
        if stale is not None and not _try_put(store, stale, record.etag):
            return None
    return runnable


def _try_put(store: TableStore, record: JobRecord, etag: str | None) -> bool:
    try:
        put_job(store, record, etag=etag)
    except (PreconditionFailedError, NotFoundError):
        return False
    return True


def finish(
    store: TableStore,
    record: JobRecord,
    message: ExecutionMessage,
    message_id: str,
    attempt: Attempt,
    *,
    now: datetime,
) -> JobRecord | None:
    """Apply the attempt to the job (ETag loop). Returns the job as written, or None if it
    was deleted meanwhile."""
    return apply(
        store,
        record,
        message,
        lambda current: lifecycle.with_attempt(
            current,
            message,
            message_id,
            succeeded=attempt.succeeded,
            started=attempt.started,
            faulted_now=attempt.faulted_now,
            final=attempt.final,
            now=now,
            history=attempt.history,
        ),
    )


def apply(
    store: TableStore,
    record: JobRecord,
    message: ExecutionMessage,
    change: Callable[[JobRecord], JobRecord],
) -> JobRecord | None:
    """Write `change(record)` ETag-conditionally, re-reading and re-applying on a conflict.
    Returns the job as written, or None if it was deleted meanwhile (also when a job of the
    same name was created since: its counters, claims and state are not this attempt's)."""
    incarnation = record.incarnation
    current = record

    def attempt() -> JobRecord | None:
        nonlocal current
        try:
            return put_job(store, change(current), etag=current.etag)
        except (PreconditionFailedError, NotFoundError) as exc:
            fresh = find_job(store, message.job_key)
            if fresh is None or fresh.incarnation != incarnation:
                return None
            current = fresh
            raise LostRace from exc

    return retry_lost_races(attempt, what=f"Job '{message.job_key}'")
