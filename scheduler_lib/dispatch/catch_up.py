"""Extension 3 (2026-12-01): occurrences run late on purpose. A job's missed-run policy
decides what the dispatcher's postponement (`postpone`) also runs (`wire/missed.missed_runs`,
which the executor asks too about an occurrence whose message arrived late); `POST
.../backfill` runs the occurrences of a past range (`backfill`).

Each late run is its occurrence's message with the occurrence's own execution tag (the tag
derives from the job and the instant, so a target sees the tag the on-time run would have
had and can de-duplicate), sent as a manual run (`ExecutionMessage.late_run`): the executor
neither judges it late nor lets it change the job's state or `recurrence.count`, and marks its
history entries `[CatchUp]` or `[Backfill]`. An occurrence whose run the executor still
remembers (its claim, kept a day) is a Duplicate and does not run twice; one that was
postponed or skipped runs.
"""

from __future__ import annotations

from datetime import datetime
from itertools import islice, takewhile

from scheduler_lib.domain import JobRecord
from scheduler_lib.domain.definition import MISSED_RUN_POLICY
from scheduler_lib.errors import ValidationError
from scheduler_lib.execution import BACKFILL, CATCH_UP, ExecutionMessage, ExecutionQueue
from scheduler_lib.schedule import Schedule
from scheduler_lib.wire.missed import MAX_RUNS


def between(schedule: Schedule, first: datetime, last: datetime) -> list[datetime]:
    """The schedule's occurrences in [first, last], at most `MAX_RUNS` + 1 (so a caller can
    tell "too many"), ascending."""
    within = takewhile(lambda instant: instant <= last, schedule.executions_from(first))
    return list(islice(within, MAX_RUNS + 1))


def note(runs: list[datetime]) -> str:
    """What the Postponed entry adds when some missed occurrences run late."""
    if not runs:
        return ""
    return f" Running {len(runs)} of them late ({MISSED_RUN_POLICY}), each marked [CatchUp]."


def send(
    queue: ExecutionQueue, job: JobRecord, occurrences: list[datetime], kind: str, *, now: datetime
) -> list[ExecutionMessage]:
    """Queue a late run (`kind`: CATCH_UP or BACKFILL) of each occurrence, visible now."""
    sent = []
    for occurrence in occurrences:
        message = ExecutionMessage.scheduled(job.key, occurrence, 0, job.incarnation)
        late = message.late_run(kind)
        queue.send(late, visible_at=now, now=now)
        sent.append(late)
    return sent


def send_missed(
    queue: ExecutionQueue, job: JobRecord, runs: list[datetime], *, now: datetime
) -> list[ExecutionMessage]:
    return send(queue, job, runs, CATCH_UP, now=now)


def backfill(
    queue: ExecutionQueue, job: JobRecord, start: datetime, end: datetime, *, now: datetime
) -> list[ExecutionMessage]:
    """Queue the occurrences of [start, end] of the job's schedule as it would have run
    (its startTime and recurrence, also before it was created); a ValidationError naming the
    field when the job has no recurrence or the range holds more than `MAX_RUNS`."""
    if not job.definition.recurs:
        raise ValidationError("properties.recurrence", "a backfill needs a recurring job")
    # Anchored as the job is (its startTime, else its creation), reaching back to `start`.
    schedule = job.definition.schedule(min(job.created_time, start))
    occurrences = between(schedule, start, end)
    if len(occurrences) > MAX_RUNS:
        raise ValidationError("to", f"the range holds more than {MAX_RUNS} occurrences")
    return send(queue, job, occurrences, BACKFILL, now=now)
