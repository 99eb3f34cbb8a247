"""What a dispatcher tick does with one due-index row of a job: its decisions, pure.

Given the job as read, the row's due time, whether the job may run at all (it is Enabled
and its collection enabled, `TickContext.runnable`) and the tick's grace cutoff (a row of a
job that is gone is simply dropped):
- `Stale`: the job no longer waits for this row (not runnable, or it moved on): the row
  goes, after finishing a postponement a crash interrupted at this very occurrence
  (`finish`), or after making sure the occurrence the job does wait for has its row
  (`repair`).
- `Postpone`: its start (with the job's jitter) is before the grace cutoff, so it was missed
  by downtime: every occurrence through now is skipped (`postpone`).
- `Send`: its execution message, numbered `number`, starting at `start` (`job`).
`advanced` is the job once its occurrence is sent. `job`, `postpone` and `chunk` read and
write; nothing here does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from scheduler_lib.domain import JobRecord
from scheduler_lib.domain.bookkeeping import Postponement
from scheduler_lib.schedule import Schedule, jittered_start


@dataclass(frozen=True)
class Stale:
    """The job no longer waits for this row: finish its interrupted postponement (`finish`)
    or make sure its next occurrence has a row (`repair`), then drop this one."""

    finish: Postponement | None = None
    repair: datetime | None = None


@dataclass(frozen=True)
class Postpone:
    """Missed by downtime: skip every occurrence from this one through now."""


@dataclass(frozen=True)
class Send:
    """Send occurrence number `number`, due at the row's time, to start at `start`."""

    number: int
    start: datetime


def decide_row(
    job: JobRecord, due: datetime, *, runnable: bool, grace_cutoff: datetime
) -> Stale | Postpone | Send:
    """What the tick does with the row of `job` due at `due` (see the module docstring)."""
    if not runnable or job.next_execution_time != due:
        postponed = job.bookkeeping.postponed
        if postponed is not None and postponed.due == due:
            return Stale(finish=postponed)
        if runnable and job.next_execution_time is not None:
            return Stale(repair=job.next_execution_time)
        return Stale()
    start = jittered_start(job.key, job.definition.max_jitter, due)  # due without jitter
    if start < grace_cutoff:
        return Postpone()
    return Send(job.bookkeeping.occurrences + 1, start)


def advanced(job: JobRecord, due: datetime, schedule: Schedule | None = None) -> JobRecord:
    """`job` once its occurrence at `due` is sent: counted, and moved to the next one
    (`schedule`: the job's, when the caller has parsed it already)."""
    if schedule is None:
        schedule = job.schedule
    bookkeeping = job.bookkeeping.with_sent(due)
    # Occurrences the executor postponed unrun give their place back (`not_run`).
    count_reached = schedule.count is not None and bookkeeping.counted >= schedule.count
    nxt = None if count_reached else schedule.next_after(due)
    return replace(job, next_execution_time=nxt, bookkeeping=bookkeeping)
