"""The dashboard's overview, a use case of its own: every collection, the dispatcher's
health, the jobs that need attention.

Sources, each the cheapest honest one:
- seconds since the last tick: the dispatcher's own state (what `GET /api/health` reads);
- occurrences dispatched in the last hour: first attempts of scheduled occurrences that
  started in the last hour, from the history table (every occurrence the dispatcher sends
  leaves one such entry; manual runs, retries and postponements are not counted);
  failures in the last 24 hours: `Failed` entries of that day. Both come from one bounded,
  server-filtered read (`store.dashboard_reads`), capped (the page then says "at least");
- outcomes per hour and start lateness p50/p99 over 24 hours and 7 days (`activity`, which
  says why from the history and not the metrics rows): the same read, of the last 7 days,
  capped at `activity.WEEK_LIMIT` rows; the 24-hour figures above are its newest day;
- needing attention, first: jobs the dead-man switch found Overdue (its own small list,
  `store.overdue_jobs`, docs/notifications.md); then jobs paused by
  stop-after-failures (`pause_after`) and jobs in a failing streak (`consecutive_failures` above
  0: one server-filtered read of the jobs table, at most `TROUBLE_LIMIT`); then `Faulted`
  jobs (a state-filtered read per collection), jobs failing now (their newest entry of the
  last 24 hours failed), and jobs with a failed or postponed entry in that time (from the
  read above). `Skipped` entries (the overlap policy) are not failures: they are counted
  apart and do not put a job on that list.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from scheduler_lib.domain import SEPARATOR, CollectionRecord, HistoryStatus, JobRecord, JobState
from scheduler_lib.domain.definition import PAUSE_AFTER
from scheduler_lib.domain.keys import split_job_key
from scheduler_lib.health import HealthBody, check_health
from scheduler_lib.service import activity
from scheduler_lib.service.context import ApiContext
from scheduler_lib.store import collections as collection_store
from scheduler_lib.store import dashboard_reads, overdue_jobs
from scheduler_lib.store import jobs as job_store
from scheduler_lib.timeutil import iso_z
from scheduler_lib.wire import quotas

#: Jobs in a failing streak (paused ones included) the overview lists at most.
TROUBLE_LIMIT = 100


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
    health: HealthBody
    dispatched_hour: int
    failures_day: int
    skipped_day: int
    capped: bool
    attention: list[Attention]
    windows: list[activity.Window] = field(default_factory=list)


def read_overview(ctx: ApiContext, *, now: datetime) -> Overview:
    store = ctx.store
    rows = []
    attention: dict[str, Attention] = {}
    for key, since in overdue_jobs(store):
        where = split_job_key(key)
        _note(attention, key, where, f"Overdue: no success within its window ({iso_z(since)})")
    for job in job_store.failing_jobs(store, limit=TROUBLE_LIMIT):
        where = (job.subscription_id, job.resource_group, job.collection_name, job.name)
        _note(attention, job.key, where, _streak(job))
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
    week = dashboard_reads.recent_history(
        store, since=now - activity.WEEK, limit=activity.WEEK_LIMIT
    )
    day = [e for e in week if e.start_time >= now - activity.DAY]
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
        capped=len(week) >= activity.WEEK_LIMIT,
        attention=list(attention.values()),
        windows=activity.windows(week, now=now),
    )


_dispatched = activity.first_attempt


def _streak(job: JobRecord) -> str:
    """Why a job with `consecutive_failures` is in trouble: paused by them, or failing."""
    count = job.consecutive_failures
    after = job.definition.pause_after
    if job.state == JobState.DISABLED and after is not None and count >= after:
        return f"paused after {count} consecutive failures ({PAUSE_AFTER})"
    return f"failing streak: {count} consecutive failure{'' if count == 1 else 's'}"


def _note(
    found: dict[str, Attention], key: str, where: tuple[str, str, str, str], reason: str
) -> None:
    slot = key.lower()
    if slot not in found:
        found[slot] = Attention(*where)
    if reason not in found[slot].reasons:
        found[slot].reasons.append(reason)
