"""Daily housekeeping: history retention and the deletion of long-finished jobs.

Azure Scheduler kept 60 days of history per job and deleted Completed and Faulted jobs 60 days
after they ended. Here, once a day (a timer trigger calls `run_housekeeping`):
- every job's history keeps at most its newest `HISTORY_KEEP` (1000) entries and none that
  started more than `RETENTION` (60 days) ago;
- a Completed or Faulted job whose end lies more than `RETENTION` ago is deleted with all its
  history. Its end is when the executor finished it (`bookkeeping["executor"]["endedAt"]`); a
  job finished by someone else (the dispatcher, for an endTime that passed with nothing to run)
  falls back to its last execution, then to its creation. The delete is ETag-conditional: a job
  replaced meanwhile (PUT of a new definition) is kept.

One pass a day over the Jobs table (`iter_jobs`) is cheap next to the per-minute dispatcher,
which never scans. History of jobs already deleted through the
API is the API's to delete (`delete_history` when it deletes the job).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from scheduler_lib.errors import NotFoundError, PreconditionFailedError
from scheduler_lib.lifecycle import EXECUTOR
from scheduler_lib.store import jobs
from scheduler_lib.store.history import delete_history, prune_history
from scheduler_lib.store.tables import TableStore

RETENTION = timedelta(days=60)
HISTORY_KEEP = 1000
FINISHED_STATES = ("Completed", "Faulted")


@dataclass(frozen=True)
class HousekeepingReport:
    jobs_scanned: int = 0
    history_pruned: int = 0  # entries removed by retention
    jobs_deleted: int = 0
    history_deleted: int = 0  # entries removed with their deleted jobs


def run_housekeeping(
    store: TableStore, *, now: datetime, history_keep: int = HISTORY_KEEP
) -> HousekeepingReport:
    """One daily pass (idempotent: running it twice removes nothing more)."""
    cutoff = now - RETENTION
    scanned = pruned = deleted = history_deleted = 0
    for job in jobs.iter_jobs(store):
        scanned += 1
        ended = _ended(job)
        if job.state in FINISHED_STATES and ended < cutoff:
            removed = _delete_finished(store, job)
            if removed is not None:
                deleted += 1
                history_deleted += removed
                continue
        pruned += prune_history(store, job.key, keep=history_keep, older_than=cutoff)
    return HousekeepingReport(scanned, pruned, deleted, history_deleted)


def _delete_finished(store: TableStore, job: jobs.JobRecord) -> int | None:
    """Delete the job as it was read (ETag), then its history; None if it changed or
    vanished meanwhile."""
    try:
        jobs.delete_job(store, job, etag=job.etag)
    except (NotFoundError, PreconditionFailedError):
        return None
    return delete_history(store, job.key)


def _ended(job: jobs.JobRecord) -> datetime:
    """When the job finished: the executor's record, else its last run, else its creation."""
    ended_at = (job.bookkeeping.get(EXECUTOR) or {}).get("endedAt")
    if ended_at:
        return datetime.fromisoformat(ended_at)
    return job.last_execution_time or job.created_time
