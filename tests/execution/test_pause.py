"""Stop after failures (`pauseAfterConsecutiveFailures`) as pure rules of the executor's
bookkeeping: what a streak is, what ends it, when the job is disabled, and that a user's own
`pauseNote` is never overwritten. (End to end: tests/test_extensions_end_to_end.py.)"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from scheduler_lib.domain import Bookkeeping, JobDefinition, JobRecord, JobState
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution.lifecycle import with_attempt
from scheduler_lib.execution.pause import failure_streak, paused_now

T0 = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
KEY = "s|r|c|j"


def _job(**definition: object) -> JobRecord:
    return JobRecord(
        "s", "r", "c", "j", JobDefinition({"action": {}, **definition}), T0,
        next_execution_time=T0 + timedelta(days=9), bookkeeping=Bookkeeping(occurrences=9),
    )  # fmt: skip


def _occurrence(
    job: JobRecord, number: int, *, failed: bool, error_action: bool = False
) -> JobRecord:
    """`job` after occurrence `number`: its main action's last attempt succeeded or faulted
    (then, optionally, its errorAction ran and succeeded)."""
    message = ExecutionMessage.scheduled(KEY, T0 + timedelta(hours=number), number)
    now = message.occurrence + timedelta(seconds=1)
    job = with_attempt(
        job, message, "m", succeeded=not failed, started=now, faulted_now=failed,
        final=not error_action, now=now,
    )  # fmt: skip
    if error_action:
        job = with_attempt(
            job, message.error_action(), "e", succeeded=True, started=now, faulted_now=False,
            final=True, now=now,
        )  # fmt: skip
    return job


def test_the_streak_counts_faulted_occurrences_and_a_success_ends_it() -> None:
    job = _job()
    streaks = []
    for number, failed in enumerate([True, True, False, True], start=1):
        job = _occurrence(job, number, failed=failed)
        streaks.append(job.consecutive_failures)
    assert streaks == [1, 2, 0, 1]
    assert job.state == JobState.ENABLED  # no limit: never paused


def test_n_faulted_occurrences_in_a_row_disable_the_job_with_a_note() -> None:
    job = _occurrence(_job(pauseAfterConsecutiveFailures=2), 1, failed=True, error_action=True)
    assert job.state == JobState.ENABLED  # an errorAction's success does not end the streak
    job = _occurrence(job, 2, failed=True)
    assert job.state == JobState.DISABLED and job.consecutive_failures == 2
    assert paused_now(job, faulted_now=True)
    assert "2 occurrences in a row faulted" in job.definition.document["pauseNote"]
    assert "2026-03-04T11:00:00Z" in job.definition.document["pauseNote"]  # the last one's


def test_a_users_own_note_is_kept() -> None:
    job = _job(pauseAfterConsecutiveFailures=1, pauseNote="owned by team X")
    job = _occurrence(job, 1, failed=True)
    assert job.state == JobState.DISABLED
    assert job.definition.document["pauseNote"] == "owned by team X"


def test_manual_runs_neither_add_to_nor_end_the_streak() -> None:
    job = _occurrence(_job(pauseAfterConsecutiveFailures=2), 1, failed=True)
    manual = ExecutionMessage.manual_run(KEY, now=T0)
    for succeeded in (False, True):
        job = with_attempt(
            job, manual, "x", succeeded=succeeded, started=T0, faulted_now=not succeeded,
            final=True, now=T0,
        )  # fmt: skip
        assert (job.consecutive_failures, job.state) == (1, JobState.ENABLED)


def test_a_job_already_disabled_or_finished_is_not_paused_again() -> None:
    job = replace(_job(pauseAfterConsecutiveFailures=1), state=JobState.DISABLED)
    job = _occurrence(job, 1, failed=True)
    assert "pauseNote" not in job.definition.document and not paused_now(
        replace(job, consecutive_failures=2), faulted_now=True
    )


def test_enabling_a_disabled_job_starts_the_streak_over() -> None:
    job = replace(_job(), state=JobState.DISABLED, consecutive_failures=3)
    assert failure_streak(job, JobState.ENABLED) == 0
    assert failure_streak(job, JobState.DISABLED) == 3
    assert failure_streak(replace(job, state=JobState.ENABLED), JobState.ENABLED) == 3
    assert failure_streak(None, JobState.ENABLED) == 0
