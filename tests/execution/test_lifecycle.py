"""Claims, counters and final states as pure functions of a JobRecord (no storage needed:
the executor's tests cover the same rules through Azurite)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from scheduler_lib.domain import Bookkeeping, ExecutorState, JobDefinition, JobRecord
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution import lifecycle
from scheduler_lib.execution.decide import Verdict, judge
from scheduler_lib.execution.lifecycle import MAX_CLAIMS, with_attempt, with_claim

T0 = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
KEY = "s|r|c|j"


def _job(**changes: object) -> JobRecord:
    empty = JobDefinition({"action": {}})
    base = JobRecord("s", "r", "c", "j", empty, T0, bookkeeping=Bookkeeping(occurrences=1))
    return replace(base, **changes)


def _done(job: JobRecord, claimed: ExecutionMessage) -> ExecutorState:
    """The executor's state of `job` with `claimed`'s claim marked done."""
    state = lifecycle.executor_state(job)
    done = replace(state.claims[claimed.execution_tag], done=True)
    return replace(state, claims={**state.claims, claimed.execution_tag: done})


MAIN0 = ExecutionMessage.scheduled(KEY, T0, 1)
MAIN1 = MAIN0.next_attempt()
ERROR0 = MAIN0.error_action()


@pytest.mark.parametrize(
    ("claimed", "done", "incoming", "message_id", "verdict"),
    [
        pytest.param(None, False, MAIN0, "a", Verdict.RUN, id="unclaimed-runs"),
        pytest.param(MAIN0, False, MAIN1, "b", Verdict.RUN, id="retry-after-claim-runs"),
        pytest.param(MAIN1, True, ERROR0, "c", Verdict.RUN, id="error-action-after-main-runs"),
        pytest.param(MAIN0, False, MAIN0, "a", Verdict.RERUN, id="same-id-not-done-reruns"),
        pytest.param(MAIN0, False, MAIN0, "b", Verdict.DUPLICATE, id="other-id-is-duplicate"),
        pytest.param(MAIN0, True, MAIN0, "a", Verdict.DUPLICATE, id="same-id-done-is-duplicate"),
        pytest.param(MAIN1, False, MAIN0, "z", Verdict.DUPLICATE, id="earlier-step-duplicate"),
        pytest.param(ERROR0, False, MAIN1, "z", Verdict.DUPLICATE, id="main-after-error-dup"),
    ],
)
def test_judge(
    claimed: ExecutionMessage | None,
    done: bool,
    incoming: ExecutionMessage,
    message_id: str,
    verdict: Verdict,
) -> None:
    job = _job()
    if claimed is not None:
        job = with_claim(job, claimed, "a", now=T0)
        if done:
            job = replace(job, bookkeeping=replace(job.bookkeeping, executor=_done(job, claimed)))
    assert judge(job, incoming, message_id)[0] is verdict


def test_a_finished_occurrence_is_a_duplicate_for_every_step() -> None:
    job = with_claim(_job(next_execution_time=T0), MAIN0, "a", now=T0)
    job = with_attempt(
        job, MAIN0, "a", succeeded=True, started=T0, faulted_now=False, final=True, now=T0
    )
    for message in (MAIN0, MAIN1, ERROR0):
        assert judge(job, message, "a")[0] is Verdict.DUPLICATE


@pytest.mark.parametrize(
    ("message", "succeeded", "faulted_now", "counts"),
    [
        pytest.param(MAIN0, True, False, (1, 0, 0), id="main-success"),
        pytest.param(MAIN0, False, False, (1, 1, 0), id="main-failure-with-retries-left"),
        pytest.param(MAIN1, False, True, (1, 1, 1), id="main-failure-exhausted"),
        pytest.param(ERROR0, False, False, (0, 0, 0), id="error-action-not-counted"),
    ],
)
def test_counters(
    message: ExecutionMessage,
    succeeded: bool,
    faulted_now: bool,
    counts: tuple[int, int, int],
) -> None:
    job = with_claim(_job(next_execution_time=T0), message, "a", now=T0)
    after = with_attempt(
        job, message, "a", succeeded=succeeded, started=T0, faulted_now=faulted_now,
        final=False, now=T0,
    )  # fmt: skip
    assert (after.execution_count, after.failure_count, after.faulted_count) == counts
    assert after.last_execution_time == (T0 if message is not ERROR0 else None)


def test_last_execution_time_never_goes_back() -> None:
    later = T0 + timedelta(minutes=5)
    job = _job(last_execution_time=later, next_execution_time=T0)
    after = with_attempt(
        job, MAIN0, "a", succeeded=True, started=T0, faulted_now=False, final=True, now=T0
    )
    assert after.last_execution_time == later


@pytest.mark.parametrize(
    ("state", "next_time", "occurrences", "manual", "expected"),
    [
        pytest.param("Enabled", None, 1, False, "Completed", id="last-occurrence-completes"),
        pytest.param("Enabled", T0, 1, False, "Enabled", id="more-to-come"),
        pytest.param("Enabled", None, 2, False, "Enabled", id="not-the-last-dispatched"),
        pytest.param("Enabled", None, 1, True, "Enabled", id="manual-run-never-completes"),
        pytest.param("Disabled", None, 1, False, "Disabled", id="disabled-stays"),
    ],
)
def test_final_state(
    state: str, next_time: datetime | None, occurrences: int, manual: bool, expected: str
) -> None:
    message = ExecutionMessage.manual_run(KEY, now=T0) if manual else MAIN0
    bookkeeping = Bookkeeping(occurrences=occurrences)
    job = _job(state=state, next_execution_time=next_time, bookkeeping=bookkeeping)
    job = with_claim(job, message, "a", now=T0)
    after = with_attempt(
        job, message, "a", succeeded=True, started=T0, faulted_now=False, final=True, now=T0
    )
    assert after.state == expected
    assert (after.bookkeeping.ended_at is not None) == (expected != state)


def test_faulted_main_then_successful_error_action_ends_faulted() -> None:
    job = with_claim(_job(), MAIN0, "a", now=T0)
    job = with_attempt(
        job, MAIN0, "a", succeeded=False, started=T0, faulted_now=True, final=False, now=T0
    )
    job = with_claim(job, ERROR0, "b", now=T0)
    job = with_attempt(
        job, ERROR0, "b", succeeded=True, started=T0, faulted_now=False, final=True, now=T0
    )
    assert (job.state, job.faulted_count) == ("Faulted", 1)


def test_abandoned_marks_a_pending_occurrence_final_once() -> None:
    job = with_claim(_job(), MAIN0, "a", now=T0)
    marked = lifecycle.abandoned(job, MAIN0, now=T0)
    assert marked is not None
    assert lifecycle.executor_state(marked).claims[MAIN0.execution_tag].final is True
    assert lifecycle.abandoned(marked, MAIN0, now=T0) is None
    assert lifecycle.abandoned(_job(), MAIN0, now=T0) is None


def test_claims_are_bounded_and_finished_ones_expire() -> None:
    job = _job(next_execution_time=T0)
    for minute in range(MAX_CLAIMS + 20):
        message = ExecutionMessage.scheduled(KEY, T0 + timedelta(minutes=minute), minute + 1)
        now = T0 + timedelta(minutes=minute)
        job = with_claim(job, message, "m", now=now)
        job = with_attempt(
            job, message, "m", succeeded=True, started=now, faulted_now=False, final=True, now=now
        )
    claims = lifecycle.executor_state(job).claims
    assert len(claims) == MAX_CLAIMS
    newest = ExecutionMessage.scheduled(KEY, T0 + timedelta(minutes=MAX_CLAIMS + 19), 1)
    assert newest.execution_tag in claims

    a_day_later = T0 + timedelta(days=2)
    fresh = ExecutionMessage.scheduled(KEY, a_day_later, 999)
    job = with_claim(job, fresh, "m", now=a_day_later)
    assert list(lifecycle.executor_state(job).claims) == [fresh.execution_tag]


def test_other_bookkeeping_keys_are_kept() -> None:
    job = _job(bookkeeping=Bookkeeping(occurrences=7, other={"dispatcher": {"x": 1}}))
    after = with_claim(job, MAIN0, "a", now=T0)
    assert after.bookkeeping.occurrences == 7
    assert after.bookkeeping.other == {"dispatcher": {"x": 1}}
    # The input is not mutated.
    assert job.bookkeeping == Bookkeeping(occurrences=7, other={"dispatcher": {"x": 1}})
