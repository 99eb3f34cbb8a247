"""Stop after failures (extension 8, api-version 2026-12-01): a job with
`pauseAfterConsecutiveFailures: N` is disabled once N of its occurrences in a row faulted.

An occurrence is faulted when its main action failed on its last allowed attempt (the rule
of `faultedCount`); a main action that succeeds ends the streak. Manual runs (`POST .../run`)
neither add to nor end it: they never change the job's state either. The streak is kept for
every job (`consecutiveFailures` under its status); the job is disabled only while Enabled
(one that just became Completed or Faulted keeps that verdict). The pause is said three
times: the state, a `Failed` history entry naming the count, and a `pauseNote` when the job
has none (a note of the user's is never overwritten).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from scheduler_lib.domain import HistoryStatus, JobRecord, JobState
from scheduler_lib.domain.definition import PAUSE_AFTER
from scheduler_lib.domain.messages import ERROR_ACTION, MAIN_ACTION, ExecutionMessage
from scheduler_lib.store import HistoryEntry
from scheduler_lib.timeutil import iso_z


def with_outcome(
    record: JobRecord, message: ExecutionMessage, *, succeeded: bool, faulted_now: bool
) -> JobRecord:
    """`record` after an attempt: its streak of faulted occurrences, and Disabled when the
    streak reaches the job's `pause_after`."""
    if message.manual:
        return record
    if succeeded and message.action != ERROR_ACTION:
        return replace(record, consecutive_failures=0) if record.consecutive_failures else record
    if not faulted_now:
        return record
    streak = record.consecutive_failures + 1
    record = replace(record, consecutive_failures=streak)
    if not pauses(record) or record.state != JobState.ENABLED:
        return record
    definition = record.definition.with_pause_note(_reason(record, message))
    return replace(record, state=JobState.DISABLED, definition=definition)


def failure_streak(existing: JobRecord | None, requested_state: str) -> int:
    """The streak a job keeps through a PUT or PATCH: enabling a Disabled job starts it
    over (else the next fault would disable it again at once); other changes keep it."""
    if existing is None or (
        existing.state == JobState.DISABLED and requested_state == JobState.ENABLED
    ):
        return 0
    return existing.consecutive_failures


def pauses(record: JobRecord) -> bool:
    """Whether the job's streak has reached its `pause_after`."""
    limit = record.definition.pause_after
    return limit is not None and record.consecutive_failures >= limit


def paused_now(saved: JobRecord, *, faulted_now: bool) -> bool:
    """Whether the attempt that just faulted (`saved`: the job as it wrote it) paused it."""
    limit = saved.definition.pause_after
    return (
        faulted_now
        and saved.state == JobState.DISABLED
        and limit is not None
        and saved.consecutive_failures == limit
    )


def pause_entry(
    saved: JobRecord, message: ExecutionMessage, attempt: HistoryEntry, *, now: datetime
) -> HistoryEntry:
    """The history entry that says the job was disabled, listed right after (newer than)
    the failed `attempt`'s entry, also when the clock has not moved since it started."""
    start = max(now, attempt.start_time + timedelta(milliseconds=1))
    return HistoryEntry(
        job_key=saved.history_key,
        start_time=start,
        end_time=start,
        expected_execution_time=message.occurrence,
        action_name=MAIN_ACTION,
        status=HistoryStatus.FAILED,
        message=_reason(saved, message),
        retry_count=message.attempt,
        repeat_count=message.occurrence_number,
    )


def _reason(record: JobRecord, message: ExecutionMessage) -> str:
    return (
        f"Job disabled: {record.consecutive_failures} occurrences in a row faulted (the last "
        f"due at {iso_z(message.occurrence)}; {PAUSE_AFTER} is "
        f"{record.definition.pause_after}). Enable it to resume."
    )
