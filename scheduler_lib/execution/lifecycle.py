"""A job's execution bookkeeping: claims (de-duplication), status counters and final state.

Pure functions from a `JobRecord` to the next one; the executor writes the result with the
ETag it read, so every rule here holds under concurrent workers.

Claims. `bookkeeping.executor.claims` (`domain.Claim`) maps an execution tag (one occurrence, or one
manual run) to the furthest attempt of it that a worker took: action, attempt, queue message id,
and whether that attempt is `done` (history written, follow-up sent) or the occurrence `final`.
A message is judged against its tag's claim (`decide.judge`):
- no claim, or a later step (a retry, the errorAction) -> Run, after claiming it;
- the same step, not done, same queue message id -> Rerun: the queue redelivered the message
  because the worker died mid-action. This is the one case where an attempt repeats
  (at-least-once); HTTP targets see the same x-ms-execution-tag and can de-duplicate;
- the same step, not done, its lease expired unrenewed -> Rerun under the watchdog's message
  id (`lease`: the worker died; its message comes back only minutes later);
- anything else (an earlier step, a step already done, the same step under another message id:
  a dispatcher tick that re-sent the occurrence) -> Duplicate, skipped.
Finished claims are kept for a day (re-sends come within the dispatcher's grace period, minutes),
and at most `MAX_CLAIMS` claims are kept, oldest finished ones dropped first, so the entity stays
small.

Counters (Azure Scheduler's documents define them loosely; the choice, and why):
- `executionCount` +1 per attempt of the main action, retries included: every attempt is a
  request the job made and has its own `MainAction` history entry, so the count matches the
  history. ErrorAction attempts are not executions of the job and are not counted.
- `failureCount` +1 per failed main-action attempt (so failureCount <= executionCount).
- `faultedCount` +1 per occurrence whose main action failed on its last allowed attempt
  ("retried and failed as many times as the retry policy states"); a policy of None has no
  retries, so its single failure faults the occurrence. The errorAction's result does not undo it.
- `lastExecutionTime` = start of the latest main-action attempt.
Manual runs (`POST .../run`) count like any occurrence but never change the state.

State. When a scheduled occurrence is final, the job has no next execution and this was the last
occurrence dispatched (its number equals `bookkeeping.occurrences`) with no other scheduled
occurrence still retrying, the job becomes `Faulted` if that last occurrence faulted, otherwise
`Completed`; `endedAt` records when, for housekeeping's 60-day deletion.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from scheduler_lib.domain import Claim, ExecutorState, JobRecord, JobState, LastFinished
from scheduler_lib.domain.executor_state import executor_state, same_step
from scheduler_lib.domain.history_counter import HistoryCounter
from scheduler_lib.domain.messages import ERROR_ACTION, ExecutionMessage
from scheduler_lib.execution import pause
from scheduler_lib.execution.lease import LEASE

MAX_CLAIMS = 50  # ~230 characters each: well inside the 32K-character property limit
FINISHED_RETENTION = timedelta(days=1)


def lease_from(now: datetime) -> datetime:
    """The end of a claim's lease taken or renewed at `now` (`lease`)."""
    return now + LEASE


def with_claim(
    record: JobRecord, message: ExecutionMessage, message_id: str, *, now: datetime
) -> JobRecord:
    """`record` with `message`'s attempt claimed under `message_id`."""
    state = executor_state(record)
    previous = state.claims.get(message.execution_tag)
    same = previous if same_step(previous, message) else None
    claim = Claim(
        action=message.action,
        attempt=message.attempt,
        message_id=message_id,
        number=message.occurrence_number,
        manual=message.manual,
        at=now,
        # When this step was first claimed: a redelivery (Rerun) started then, not now.
        claimed_at=same.started if same else now,
        faulted=previous is not None and previous.faulted,
        lease_until=lease_from(now),
        # Taken over from another message of the same step: a watchdog's takeover.
        takeovers=(same.takeovers + (same.message_id != message_id)) if same else 0,
    )
    claims = _pruned({**state.claims, message.execution_tag: claim}, now)
    return with_state(record, replace(state, claims=claims))


def abandoned(record: JobRecord, message: ExecutionMessage, *, now: datetime) -> JobRecord | None:
    """`record` with the message's occurrence marked final without running (its job is no longer
    Enabled), or None when there is nothing to mark; so that a stale claim never holds up the
    job's completion once it is enabled again."""
    state = executor_state(record)
    claim = state.claims.get(message.execution_tag)
    if claim is None or claim.final:
        return None
    marked = replace(claim, final=True, done=True, abandoned=True, at=now, lease_until=None)
    claims = {**state.claims, message.execution_tag: marked}
    return with_state(record, replace(state, claims=claims))


def with_attempt(
    record: JobRecord,
    message: ExecutionMessage,
    message_id: str,
    *,
    succeeded: bool,
    started: datetime,
    faulted_now: bool,
    final: bool,
    now: datetime,
    history: HistoryCounter | None = None,
) -> JobRecord:
    """`record` after one attempt: counters, the claim marked done (and final), and the state.

    `faulted_now`: this attempt exhausted the main action's retries. `final`: the occurrence
    has no further attempt (of either action). `history`: the history counter as the
    attempt's entry left it, the snapshot the next entry is written with (None: unchanged).
    """
    changes: dict[str, Any] = {}
    if message.action != ERROR_ACTION:
        changes["execution_count"] = record.execution_count + 1
        changes["failure_count"] = record.failure_count + (0 if succeeded else 1)
        last = record.last_execution_time
        changes["last_execution_time"] = started if last is None or started > last else last
    if faulted_now:
        changes["faulted_count"] = record.faulted_count + 1

    state = executor_state(record)
    claims = dict(state.claims)
    claim = claims.get(message.execution_tag)
    if claim is not None and same_step(claim, message):
        # Only our own claim is updated: a retry may already have claimed the next step.
        claim = replace(claim, done=True, faulted=claim.faulted or faulted_now, lease_until=None)
        if final:
            claim = replace(claim, final=True, at=now)
        claims[message.execution_tag] = claim
    faulted = (claim is not None and claim.faulted) or faulted_now
    state = replace(state, claims=claims)
    if history is not None:
        state = replace(state, history=history)
    if final and not message.manual:
        state, changes["state"] = _finished(record, state, message, faulted=faulted, now=now)
    state = replace(state, claims=_pruned(state.claims, now))
    updated = replace(with_state(record, state), **changes)
    return pause.with_outcome(updated, message, succeeded=succeeded, faulted_now=faulted_now)


def with_postponed(record: JobRecord, message: ExecutionMessage, *, now: datetime) -> JobRecord:
    """`record` after its occurrence was postponed by the executor (it started later than the
    grace period allows): the claim final, nothing counted (as the dispatcher's postponement
    counts nothing), and Completed if that was the job's last occurrence."""
    state = executor_state(record)
    claim = state.claims.get(message.execution_tag)
    if claim is None or not claim.postponed:
        record = _given_back(record, now=now)
    if claim is not None:
        marked = replace(claim, done=True, final=True, postponed=True, at=now, lease_until=None)
        state = replace(state, claims={**state.claims, message.execution_tag: marked})
    state, job_state = _finished(record, state, message, faulted=False, now=now)
    state = replace(state, claims=_pruned(state.claims, now))
    return replace(with_state(record, state), state=job_state)


def _given_back(record: JobRecord, *, now: datetime) -> JobRecord:
    """`record` with a postponed occurrence not counted toward `recurrence.count` (it never
    ran). If it had taken the last place of the count, the job gets one more occurrence, the
    first after `now` and after every occurrence already sent (the caller indexes it)."""
    bookkeeping = replace(record.bookkeeping, not_run=record.bookkeeping.not_run + 1)
    nxt = record.next_execution_time
    if nxt is None and record.state == JobState.ENABLED:
        schedule = record.schedule
        if schedule.count is not None and bookkeeping.counted < schedule.count:
            nxt = schedule.next_after(max([now, *bookkeeping.sent]))
    return replace(record, bookkeeping=bookkeeping, next_execution_time=nxt)


def _finished(
    record: JobRecord,
    state: ExecutorState,
    message: ExecutionMessage,
    *,
    faulted: bool,
    now: datetime,
) -> tuple[ExecutorState, JobState]:
    """`state` once `message`'s occurrence is over (remembered if it is the job's last
    dispatched one), and the job's state: Completed/Faulted, ended now, if nothing follows."""
    dispatched = record.bookkeeping.occurrences
    if message.occurrence_number == dispatched:
        last = LastFinished(message.occurrence_number, message.execution_tag, faulted)
        state = replace(state, last_finished=last)
    new_state = _final_state(record, state, message)
    if new_state is None:
        return state, record.state
    return replace(state, ended_at=now), new_state


def _final_state(
    record: JobRecord, state: ExecutorState, message: ExecutionMessage
) -> JobState | None:
    """Completed/Faulted when the job's last dispatched occurrence is over, else None."""
    last = state.last_finished
    if record.state != JobState.ENABLED or record.next_execution_time is not None:
        return None
    if last is None or last.number != record.bookkeeping.occurrences:
        return None
    if state.running(besides=message.execution_tag):
        return None
    return JobState.FAULTED if last.faulted else JobState.COMPLETED


def _pruned(claims: Mapping[str, Claim], now: datetime) -> dict[str, Claim]:
    """`claims` without those finished over `FINISHED_RETENTION` ago, and at most
    `MAX_CLAIMS`: the oldest finished claims go first, then the oldest of the rest."""
    cutoff = now - FINISHED_RETENTION
    kept = {tag: c for tag, c in claims.items() if not (c.final and c.at < cutoff)}
    if len(kept) > MAX_CLAIMS:
        order = sorted(kept, key=lambda t: (not kept[t].final, kept[t].at))
        for tag in order[: len(kept) - MAX_CLAIMS]:
            del kept[tag]
    return kept


def with_state(record: JobRecord, state: ExecutorState) -> JobRecord:
    """`record` with `state` as its executor's bookkeeping."""
    return replace(record, bookkeeping=replace(record.bookkeeping, executor=state))
