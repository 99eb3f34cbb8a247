"""Daily housekeeping: history retention and the deletion of long-finished jobs.

Azure Scheduler kept 60 days of history per job and deleted Completed and Faulted jobs 60 days
after they ended. Here, once a day (a timer trigger calls `run_housekeeping`):
- every job's history keeps at most its newest `HISTORY_KEEP` (1000) entries and none that
  started more than `RETENTION` (60 days) ago;
- a Completed or Faulted job whose end lies more than `RETENTION` ago is deleted with all its
  history. Its end is when the executor finished it (`bookkeeping.ended_at`); a
  job finished by someone else (the dispatcher, for an endTime that passed with nothing to run)
  falls back to its last execution, then to its creation. The delete is ETag-conditional: a job
  replaced meanwhile (PUT of a new definition) is kept.

One pass a day over the Jobs table (`iter_jobs`) is cheap next to the per-minute dispatcher,
which never scans. The same pass finishes the background deletion of deleted jobs' history
(`history_purge`; ticks delete a bounded share) and, given the grace period, runs the full
consistency check (`anti_entropy`: overdue and unindexed Enabled jobs are re-indexed).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta

from scheduler_lib.dispatch import RepairReport, repair_jobs
from scheduler_lib.domain import FINISHED_JOB_STATES, JobRecord
from scheduler_lib.errors import NotFoundError, PreconditionFailedError
from scheduler_lib.store import (
    HISTORY_KEEP,
    TableStore,
    delete_history,
    jobs,
    prune_history,
    purge_histories,
)

RETENTION = timedelta(days=60)
#: When the daily pass runs, in UTC: the housekeeping timer's NCRONTAB schedule (function_app.py)
#: and the local host's daily loop (devtools/devhost.py) both read it, so they cannot drift.
DAILY_AT = time(3, 17)
DAILY_SCHEDULE = f"0 {DAILY_AT.minute} {DAILY_AT.hour} * * *"


@dataclass(frozen=True)
class HousekeepingReport:
    jobs_scanned: int = 0
    history_pruned: int = 0  # entries removed by retention
    jobs_deleted: int = 0
    history_deleted: int = 0  # entries removed with their deleted jobs
    history_purged: int = 0  # entries of jobs deleted through the API, purged in background
    repair: RepairReport | None = None


def next_daily_run(now: datetime) -> datetime:
    """The first `DAILY_AT` (UTC) strictly after `now`: when the daily timer fires next."""
    at = datetime.combine(now.astimezone(UTC).date(), DAILY_AT, tzinfo=UTC)
    return at if at > now else at + timedelta(days=1)


def run_housekeeping(
    store: TableStore,
    *,
    now: datetime,
    history_keep: int = HISTORY_KEEP,
    grace_period: timedelta | None = None,
) -> HousekeepingReport:
    """One daily pass (idempotent: running it twice removes nothing more). With
    `grace_period`, also the full consistency check."""
    cutoff = now - RETENTION
    scanned = pruned = deleted = history_deleted = 0
    for job in jobs.iter_jobs(store):
        scanned += 1
        ended = _ended(job)
        if job.state in FINISHED_JOB_STATES and ended < cutoff:
            removed = _delete_finished(store, job)
            if removed is not None:
                deleted += 1
                history_deleted += removed
                continue
        pruned += prune_history(store, job.history_key, keep=history_keep, older_than=cutoff)
    purged = purge_histories(store)
    repair = None
    if grace_period is not None:
        repair = repair_jobs(store, now=now, grace_period=grace_period, unindexed=True)
    return HousekeepingReport(scanned, pruned, deleted, history_deleted, purged, repair)


def _delete_finished(store: TableStore, job: JobRecord) -> int | None:
    """Delete the job as it was read (ETag), then its history; None if it changed or
    vanished meanwhile."""
    try:
        jobs.delete_job(store, job, etag=job.etag)
    except (NotFoundError, PreconditionFailedError):
        return None
    return delete_history(store, job.history_key)


def _ended(job: JobRecord) -> datetime:
    """When the job finished: the executor's record, else its last run, else its creation."""
    return job.bookkeeping.ended_at or job.last_execution_time or job.created_time
