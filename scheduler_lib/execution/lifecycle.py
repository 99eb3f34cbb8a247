"""A job's execution bookkeeping: claims (de-duplication), status counters and final state.

Pure functions from a `JobRecord` to the next one; the executor writes the result with the
ETag it read, so every rule here holds under concurrent workers.

Claims. `bookkeeping.executor[CLAIMS]` maps an execution tag (one occurrence, or one
manual run) to the furthest attempt of it that a worker took: action, attempt, queue message id,
and whether that attempt is `done` (history written, follow-up sent) or the occurrence `final`.
A message is judged against its tag's claim:
- no claim, or a later step (a retry, the errorAction) -> Run, after claiming it;
- the same step, not done, same queue message id -> Rerun: the queue redelivered the message
  because the worker died mid-action. This is the one case where an attempt repeats
  (at-least-once); HTTP targets see the same x-ms-execution-tag and can de-duplicate;
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

import copy
from dataclasses import replace
from datetime import datetime, timedelta
from enum import Enum
from typing import Any

from scheduler_lib.domain import CLAIMS, ENDED_AT, JobRecord, JobState
from scheduler_lib.execution import pause
from scheduler_lib.execution.messages import ERROR_ACTION, ExecutionMessage
from scheduler_lib.schedule import parse_schedule

MAX_CLAIMS = 50  # ~230 characters each: well inside the 32K-character property limit
FINISHED_RETENTION = timedelta(days=1)


class Verdict(Enum):
    RUN = "Run"
    RERUN = "Rerun"
    DUPLICATE = "Duplicate"


def executor_state(record: JobRecord) -> dict[str, Any]:
    """A copy of the executor's bookkeeping (`claims`, `lastFinished`, `endedAt`)."""
    state = copy.deepcopy(dict(record.bookkeeping.executor))
    state.setdefault(CLAIMS, {})
    return state


def _step(action: str, attempt: int) -> tuple[int, int]:
    """Order of an occurrence's attempts: main action 0..n, then errorAction 0..n."""
    return (1 if action == ERROR_ACTION else 0, attempt)


def judge(record: JobRecord, message: ExecutionMessage, message_id: str) -> tuple[Verdict, str]:
    """Whether this worker should run `message` (see the module docstring)."""
    claim = executor_state(record)[CLAIMS].get(message.execution_tag)
    if claim is None:
        return Verdict.RUN, "first delivery"
    if claim.get("final"):
        return Verdict.DUPLICATE, "the occurrence already finished"
    mine = _step(message.action, message.attempt)
    theirs = _step(claim["action"], claim["attempt"])
    if mine > theirs:
        return Verdict.RUN, "next step of the occurrence"
    if mine < theirs:
        return Verdict.DUPLICATE, "a later attempt of the occurrence was already taken"
    if claim.get("done"):
        return Verdict.DUPLICATE, "this attempt already ran"
    if claim.get("messageId") == message_id:
        return Verdict.RERUN, "redelivered after a worker stopped mid-attempt"
    return Verdict.DUPLICATE, "another message for this attempt was already taken"


def with_claim(
    record: JobRecord, message: ExecutionMessage, message_id: str, *, now: datetime
) -> JobRecord:
    """`record` with `message`'s attempt claimed under `message_id`."""
    state = executor_state(record)
    claims = state[CLAIMS]
    previous = claims.get(message.execution_tag) or {}
    same_step = (
        previous.get("action") == message.action and previous.get("attempt") == message.attempt
    )
    claims[message.execution_tag] = {
        # When this step was first claimed: a redelivery (Rerun) started then, not now.
        "claimedAt": previous.get("claimedAt", previous["at"]) if same_step else now.isoformat(),
        "action": message.action,
        "attempt": message.attempt,
        "messageId": message_id,
        "number": message.occurrence_number,
        "manual": message.manual,
        "done": False,
        "final": False,
        "faulted": bool(previous.get("faulted")),
        "at": now.isoformat(),
    }
    _prune(claims, now)
    return _with_state(record, state)


def claimed_at(record: JobRecord, message: ExecutionMessage) -> datetime | None:
    """When `message`'s step was first claimed (its attempt started then), if it is claimed."""
    claim = executor_state(record)[CLAIMS].get(message.execution_tag)
    if claim is None or _step(claim["action"], claim["attempt"]) != _step(
        message.action, message.attempt
    ):
        return None
    return datetime.fromisoformat(claim.get("claimedAt", claim["at"]))


def abandoned(record: JobRecord, message: ExecutionMessage, *, now: datetime) -> JobRecord | None:
    """`record` with the message's occurrence marked final without running (its job is no longer
    Enabled), or None when there is nothing to mark; so that a stale claim never holds up the
    job's completion once it is enabled again."""
    state = executor_state(record)
    claim = state[CLAIMS].get(message.execution_tag)
    if claim is None or claim.get("final"):
        return None
    claim.update(final=True, done=True, abandoned=True, at=now.isoformat())
    return _with_state(record, state)


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
) -> JobRecord:
    """`record` after one attempt: counters, the claim marked done (and final), and the state.

    `faulted_now`: this attempt exhausted the main action's retries. `final`: the occurrence
    has no further attempt (of either action).
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
    claims = state[CLAIMS]
    claim = claims.get(message.execution_tag)
    if claim is not None and _step(claim["action"], claim["attempt"]) == _step(
        message.action, message.attempt
    ):
        # Only our own claim is updated: a retry may already have claimed the next step.
        claim["done"] = True
        claim["faulted"] = bool(claim.get("faulted")) or faulted_now
        if final:
            claim.update(final=True, at=now.isoformat())
    faulted = bool(claim and claim.get("faulted")) or faulted_now
    if final and not message.manual:
        new_state = _final_state(record, state, message, faulted=faulted)
        if new_state is not None:
            changes["state"] = new_state
            state[ENDED_AT] = now.isoformat()
    _prune(claims, now)
    updated = replace(_with_state(record, state), **changes)
    return pause.with_outcome(updated, message, succeeded=succeeded, faulted_now=faulted_now)


def with_postponed(record: JobRecord, message: ExecutionMessage, *, now: datetime) -> JobRecord:
    """`record` after its occurrence was postponed by the executor (it started later than the
    grace period allows): the claim final, nothing counted (as the dispatcher's postponement
    counts nothing), and Completed if that was the job's last occurrence."""
    state = executor_state(record)
    claim = state[CLAIMS].get(message.execution_tag)
    if claim is None or not claim.get("postponed"):
        record = _given_back(record, now=now)
    if claim is not None:
        claim.update(done=True, final=True, postponed=True, at=now.isoformat())
    changes: dict[str, Any] = {}
    new_state = _final_state(record, state, message, faulted=False)
    if new_state is not None:
        changes["state"] = new_state
        state[ENDED_AT] = now.isoformat()
    _prune(state[CLAIMS], now)
    return replace(_with_state(record, state), **changes)


def _given_back(record: JobRecord, *, now: datetime) -> JobRecord:
    """`record` with a postponed occurrence not counted toward `recurrence.count` (it never
    ran). If it had taken the last place of the count, the job gets one more occurrence, the
    first after `now` and after every occurrence already sent (the caller indexes it)."""
    bookkeeping = replace(record.bookkeeping, not_run=record.bookkeeping.not_run + 1)
    nxt = record.next_execution_time
    if nxt is None and record.state == JobState.ENABLED:
        schedule = parse_schedule(record.definition, now=record.created_time)
        if schedule.count is not None and bookkeeping.counted < schedule.count:
            nxt = schedule.next_after(max([now, *bookkeeping.sent]))
    return replace(record, bookkeeping=bookkeeping, next_execution_time=nxt)


def _final_state(
    record: JobRecord, state: dict[str, Any], message: ExecutionMessage, *, faulted: bool
) -> str | None:
    """Completed/Faulted when the job's last dispatched occurrence is over, else None."""
    dispatched = record.bookkeeping.occurrences
    if message.occurrence_number == dispatched:
        state["lastFinished"] = {
            "number": message.occurrence_number,
            "tag": message.execution_tag,
            "faulted": faulted,
        }
    last = state.get("lastFinished")
    if record.state != JobState.ENABLED or record.next_execution_time is not None:
        return None
    if not last or last.get("number") != dispatched:
        return None
    still_running = any(
        not c.get("final") and not c.get("manual")
        for tag, c in state[CLAIMS].items()
        if tag != message.execution_tag
    )
    if still_running:
        return None
    return JobState.FAULTED if last.get("faulted") else JobState.COMPLETED


def _prune(claims: dict[str, Any], now: datetime) -> None:
    cutoff = now - FINISHED_RETENTION
    for tag in [t for t, c in claims.items() if c.get("final") and _at(c) < cutoff]:
        del claims[tag]
    if len(claims) > MAX_CLAIMS:
        # Oldest finished claims go first, then the oldest of the rest.
        order = sorted(claims, key=lambda t: (not claims[t].get("final"), _at(claims[t])))
        for tag in order[: len(claims) - MAX_CLAIMS]:
            del claims[tag]


def _at(claim: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(claim["at"])


def _with_state(record: JobRecord, state: dict[str, Any]) -> JobRecord:
    return replace(record, bookkeeping=replace(record.bookkeeping, executor=state))
