"""What a job of a collection enabled again does about the occurrences it missed meanwhile.

While a collection is Disabled or Suspended, the dispatcher drops its jobs' due rows and runs
nothing; enabled again, each job continues at its next occurrence after now
(`service/jobs.resume_jobs`). The occurrences in between were missed on purpose, but
for the job they are missed all the same, so its `missedRunPolicy` decides, exactly as after
downtime (`wire/missed.missed_runs`, the one decision): Skip (the default) runs none of them,
RunLatest the latest one, once, RunAll those inside `catchUpWindow`, at most 50. Never the
burst of every missed occurrence; each late run is marked [CatchUp] in history, carries its
occurrence's execution tag and does not count towards `recurrence.count`.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from scheduler_lib.dispatch import send_missed
from scheduler_lib.domain import JobRecord
from scheduler_lib.execution import ExecutionMessage, ExecutionQueue
from scheduler_lib.schedule import Schedule
from scheduler_lib.wire.missed import missed_runs


def run_missed(
    queue: ExecutionQueue, job: JobRecord, schedule: Schedule, *, now: datetime
) -> list[ExecutionMessage]:
    """Queue the late runs `job`'s policy asks for, of its occurrences from its stored next
    execution (the first one missed) until just before `now` (an occurrence at `now` is
    still the job's next one, not a missed one)."""
    first = job.next_execution_time
    if first is None or first >= now:
        return []
    runs = missed_runs(job, schedule, first, now=now - timedelta(microseconds=1))
    return send_missed(queue, job, runs, now=now)
