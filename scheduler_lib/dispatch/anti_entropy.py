"""Consistency check: an Enabled job must never be left without a due-index row.

The dispatcher finds jobs only through the due index. A job whose row is lost — a race
that removed it after it was written, a crash between writes, a bug — stays Enabled with a
`nextExecutionTime` and never runs again, silently. So this pass looks for such jobs and
repairs them:

- overdue: Enabled, in an enabled collection, next execution more than the grace period
  plus `OVERDUE_MARGIN` ago (a tick would have moved it on long since). Its row is written
  again under the current minute (`reindex_overdue`), so the next tick reads it and applies
  the usual rules: within the grace period it runs late, beyond it one `Postponed` entry
  and the job continues at its next occurrence.
- unindexed (daily pass only, it costs a point read per Enabled job): next execution still
  ahead but no row at its minute: the row is written again.

Every repair is logged (a warning: it means something went wrong). The dispatcher runs the
overdue check every `CHECK_EVERY_MINUTES` ticks (one filtered scan of `Jobs`), the daily
housekeeping runs both; the result is stored for the health endpoint, which reports the
number of overdue jobs found and is Degraded while it is not zero.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta

from scheduler_lib.domain import JobRecord
from scheduler_lib.errors import NotFoundError
from scheduler_lib.store import (
    TableStore,
    add_due,
    enabled_jobs,
    get_collection,
    has_due_row,
    reindex_overdue,
    save_repair_state,
)
from scheduler_lib.timeutil import iso_z

log = logging.getLogger("scheduler.repair")

#: How far past the grace period a next execution may lie before it counts as overdue: the
#: dispatcher advances a job when it sends it (up to a minute ahead), so a minute or two
#: covers a slow tick.
OVERDUE_MARGIN = timedelta(minutes=2)
#: The dispatcher runs the overdue check on ticks at minutes divisible by this.
CHECK_EVERY_MINUTES = 5


@dataclass(frozen=True)
class RepairReport:
    checked_at: str
    overdue: int = 0
    unindexed: int = 0
    jobs_checked: int = 0


def due_for_check(now: datetime) -> bool:
    """Whether the tick at `now` runs the periodic overdue check."""
    return now.minute % CHECK_EVERY_MINUTES == 0


def repair_jobs(
    store: TableStore, *, now: datetime, grace_period: timedelta, unindexed: bool = False
) -> RepairReport:
    """Find and repair overdue (and, with `unindexed`, unindexed) Enabled jobs; the report is
    stored for the health endpoint."""
    cutoff = now - grace_period - OVERDUE_MARGIN
    enabled: dict[str, bool] = {}
    overdue = missing = checked = 0
    for job in enabled_jobs(store, due_before=None if unindexed else cutoff):
        checked += 1
        due = job.next_execution_time
        if due is None or not _collection_enabled(store, job, enabled):
            continue
        if due < cutoff:
            reindex_overdue(store, job.key, due, now=now)
            overdue += 1
            log.warning("overdue job re-indexed", extra={"job": job.key, "occurrence": iso_z(due)})
        elif unindexed and not has_due_row(store, job.key, due):
            add_due(store, job.key, due, incarnation=job.incarnation)
            missing += 1
            log.warning(
                "unindexed job re-indexed", extra={"job": job.key, "occurrence": iso_z(due)}
            )
    report = RepairReport(iso_z(now), overdue, missing, checked)
    save_repair_state(store, asdict(report))
    return report


def _collection_enabled(store: TableStore, job: JobRecord, cache: dict[str, bool]) -> bool:
    """A disabled collection's jobs have no rows on purpose (ticks drop them)."""
    key = job.collection_key
    if key not in cache:
        try:
            cache[key] = get_collection(
                store, job.subscription_id, job.resource_group, job.collection_name
            ).enabled
        except NotFoundError:
            cache[key] = False
    return cache[key]
