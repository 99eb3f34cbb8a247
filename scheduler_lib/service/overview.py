"""The dashboard's overview, a use case of its own: every collection, the dispatcher's
health, the jobs that need attention.

Sources, each the cheapest honest one:
- seconds since the last tick: the dispatcher's own state (what `GET /api/health` reads);
- occurrences dispatched in the last hour: first attempts of scheduled occurrences that
  started in the last hour, from the history table (every occurrence the dispatcher sends
  leaves one such entry; manual runs, retries and postponements are not counted);
  failures in the last 24 hours: `Failed` entries of that day. Both are one bounded,
  server-filtered read (`store.dashboard_reads`), capped at `LIMIT` rows (the page then
  says "at least");
- needing attention, first: jobs the dead-man switch found Overdue (its own small list,
  `store.overdue_jobs`, docs/notifications.md); then `Faulted` jobs (a state-filtered read
  per collection), jobs failing now (their newest entry of the last 24 hours failed), and
  jobs with a failed or postponed entry in that time (from the read above). `Skipped`
  entries (concurrencyPolicy) are not failures: they are counted apart and do not put a
  job on that list.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from scheduler_lib.domain import SEPARATOR, CollectionRecord, HistoryStatus, JobState
from scheduler_lib.domain.keys import split_job_key
from scheduler_lib.health import check_health
from scheduler_lib.service.context import ApiContext
from scheduler_lib.store import collections as collection_store
from scheduler_lib.store import dashboard_reads, overdue_jobs
from scheduler_lib.store import jobs as job_store
from scheduler_lib.timeutil import iso_z
from scheduler_lib.wire import quotas

LIMIT = 5000


@dataclass(frozen=True)
class CollectionRow:
    record: CollectionRecord
    sku: str
    jobs: int
    quota: int


@dataclass
class Attention:
    """A job worth a look, and why."""

    subscription: str
    group: str
    collection: str
    job: str
    reasons: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Overview:
    collections: list[CollectionRow]
    health: dict[str, Any]
    dispatched_hour: int
    failures_day: int
    skipped_day: int
    capped: bool
    attention: list[Attention]


def read_overview(ctx: ApiContext, *, now: datetime) -> Overview:
    store = ctx.store
    rows = []
    attention: dict[str, Attention] = {}
    for key, since in overdue_jobs(store):
        where = split_job_key(key)
        _note(attention, key, where, f"Overdue: no success within its window ({iso_z(since)})")
    for record in sorted(collection_store.all_collections(store), key=lambda r: r.name.lower()):
        limits = quotas.effective_limits(record.properties)
        sku = (record.properties.get("sku") or {}).get("name", "Standard")
        count = job_store.count_jobs(store, record.key)
        rows.append(CollectionRow(record, sku, count, limits.max_job_count))
        faulted, _ = job_store.list_jobs(
            store, record.subscription_id, record.resource_group, record.name,
            state=JobState.FAULTED, page_size=100,
        )  # fmt: skip
        for job in faulted:
            where = (record.subscription_id, record.resource_group, record.name, job.name)
            _note(attention, job.key, where, "Faulted")
    _, health = check_health(ctx.table_store, now=now)
    day = dashboard_reads.recent_history(store, since=now - timedelta(days=1), limit=LIMIT)
    hour_ago = now - timedelta(hours=1)
    dispatched = sum(1 for e in day if e.start_time >= hour_ago and _dispatched(e))
    failures = [e for e in day if e.status == HistoryStatus.FAILED]
    newest: dict[str, dashboard_reads.RecentEntry] = {}
    for entry in day:
        known = newest.get(entry.history_key)
        if known is None or entry.start_time > known.start_time:
            newest[entry.history_key] = entry
    for entry in day:
        if entry.status in (HistoryStatus.FAILED, HistoryStatus.POSTPONED):
            # A history key is the job key, or the job key and an incarnation.
            sub, group, coll, name = entry.history_key.split(SEPARATOR)[:4]
            where = (sub, group, coll, name)
            reason = "failed in the last 24 h" if entry.status == "Failed" else "postponed/missed"
            if entry.status == HistoryStatus.FAILED and newest[entry.history_key] == entry:
                reason = "failing now (its last run failed)"
            _note(attention, SEPARATOR.join(where), where, reason)
    return Overview(
        collections=rows,
        health=health,
        dispatched_hour=dispatched,
        failures_day=len(failures),
        skipped_day=sum(1 for e in day if e.status == HistoryStatus.SKIPPED),
        capped=len(day) >= LIMIT,
        attention=list(attention.values()),
    )


def _dispatched(entry: dashboard_reads.RecentEntry) -> bool:
    """The first attempt of a scheduled occurrence that ran (a manual run, a retry, an
    errorAction, a postponement or a skipped occurrence did not run as dispatched)."""
    return (
        entry.action_name == "MainAction"
        and entry.retry_count == 0
        and entry.repeat_count > 0
        and entry.status not in (HistoryStatus.POSTPONED, HistoryStatus.SKIPPED)
    )


def _note(
    found: dict[str, Attention], key: str, where: tuple[str, str, str, str], reason: str
) -> None:
    slot = key.lower()
    if slot not in found:
        found[slot] = Attention(*where)
    if reason not in found[slot].reasons:
        found[slot].reasons.append(reason)
