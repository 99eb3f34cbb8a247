"""The executor's decisions: what one execution message does, as a value.

Pure functions from the message, the job (and its collection) as last read, and `now` to a
decision; nothing here reads or writes storage or a queue, so every rule of the state
machine can be read, and tested, in one place. The I/O modules ask, then apply:

- `runnable` and `admit` (asked by `claims` on each read of the job): drop it (`Skip`: the
  job or its collection gone, the collection disabled, a scheduled occurrence of a job that
  is not Enabled), skip it as a duplicate, or run it (`Verdict` Run or Rerun, `judge`).
- `before_run` (asked by `claims` with the claim, on the same read; asked again at the
  second, when an early delivery's claim is written): postpone it (`Postpone`: its first
  attempt would start later than the grace period; `missed_runs_late` says whether the
  job's missed-run policy runs it late, `late`), wait for its exact second (`Wait`), or
  `start` it: the action to run with its context, whether its job's overlap policy has
  a say (`overlap`), or `NoAction` (the errorAction was removed meanwhile).
- `follow_up` (asked by `finish` once the attempt's history entry is written): retry at T,
  run the errorAction, or the occurrence is over; and whether it faulted just now.

The rules that change the job's bookkeeping are `lifecycle`'s; the readers of it are
`domain/executor_state.py`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum
from typing import Any

from scheduler_lib.domain import CollectionRecord, JobRecord, JobState
from scheduler_lib.domain.executor_state import claimed_at, executor_state, step_claim, step_order
from scheduler_lib.domain.messages import ERROR_ACTION, MAIN_ACTION, ExecutionMessage
from scheduler_lib.execution.backoff import Draw, Failure
from scheduler_lib.execution.lease import Takeover
from scheduler_lib.execution.retry import RetryPolicy
from scheduler_lib.wire import signing
from scheduler_lib.wire.missed import missed_runs
from scheduler_lib.wire.overlap import ConcurrencyPolicy


class Verdict(Enum):
    RUN = "Run"
    RERUN = "Rerun"
    DUPLICATE = "Duplicate"


@dataclass(frozen=True)
class Skip:
    """Why a message is not run: disposition Dropped or Duplicate, and the reason;
    `postponed`: the job as read, when this very message's attempt was made final without
    running (a redelivery: `late.resend_late_run` may owe it its late run); `abandon`: the
    job may no longer run it, so its occurrence's claim is closed (`lifecycle.abandoned`)."""

    disposition: str
    reason: str
    postponed: JobRecord | None = None
    abandon: bool = False


@dataclass(frozen=True)
class Postpone:
    """The occurrence started later than the grace period: recorded, not run (`late`)."""

    claimed_at: datetime


@dataclass(frozen=True)
class Wait:
    """The attempt was delivered early: wait for its exact second (`start_at`), then claim
    it, conditional on the job as read before the wait (`claims.claim` with `early`; read
    again if it changed), and `start` it as it is then."""

    start_at: datetime


@dataclass(frozen=True)
class Start:
    """Run `action` now; `hold`: the job's overlap policy decides first (`overlap`)."""

    action: Mapping[str, Any]
    hold: bool
    job_id: str
    collection_id: str
    placeholders: bool
    signing_secrets: tuple[str, ...]


@dataclass(frozen=True)
class NoAction:
    """The errorAction was removed after the main action faulted: the occurrence is over."""


@dataclass(frozen=True)
class FollowUp:
    """What follows a written attempt: `message` at `at` (None: the occurrence is over),
    and whether this attempt exhausted the main action's retries (`faulted_now`)."""

    message: ExecutionMessage | None
    at: datetime | None
    faulted_now: bool


def runnable(
    record: JobRecord | None, collection: CollectionRecord | None, message: ExecutionMessage
) -> Skip | tuple[JobRecord, CollectionRecord]:
    """Why `message` may not run against `record` in `collection` (None: not found), or
    both, when it may."""
    if record is None:
        return Skip("Dropped", "the job no longer exists")
    if not message.belongs_to(record.incarnation):
        # Its claims are the new job's (tags derive from name and time): leave them be.
        return Skip("Dropped", "the job was deleted and created again since it was sent")
    if collection is None:
        return Skip("Dropped", "the job collection no longer exists", abandon=True)
    if not collection.enabled:
        return Skip("Dropped", "the job collection is disabled", abandon=True)
    if not message.manual and record.state != JobState.ENABLED:
        return Skip("Dropped", f"the job is {record.state}", abandon=True)
    return record, collection


def admit(
    record: JobRecord, message: ExecutionMessage, message_id: str, takeover: Takeover | None
) -> Verdict | Skip:
    """Whether this worker claims `message` on the runnable `record`: Run, Rerun, or the
    Duplicate it skips (see `judge`)."""
    verdict, why = judge(record, message, message_id, takeover)
    if verdict is Verdict.DUPLICATE:
        here = postponed_here(record, message, message_id)
        return Skip("Duplicate", why, record if here else None)
    return verdict


def judge(
    record: JobRecord, message: ExecutionMessage, message_id: str, takeover: Takeover | None = None
) -> tuple[Verdict, str]:
    """Whether this worker should run `message` (see `lifecycle`'s docstring); `takeover`: a
    watchdog's, for the step's expired lease."""
    claim = executor_state(record).claims.get(message.execution_tag)
    if claim is None:
        return Verdict.RUN, "first delivery"
    if claim.final:
        if message.catch_up and (claim.postponed or claim.abandoned):
            return Verdict.RUN, "a late run of an occurrence that did not run"
        return Verdict.DUPLICATE, "the occurrence already finished"
    mine = step_order(message.action, message.attempt)
    theirs = step_order(claim.action, claim.attempt)
    if mine > theirs:
        return Verdict.RUN, "next step of the occurrence"
    if mine < theirs:
        return Verdict.DUPLICATE, "a later attempt of the occurrence was already taken"
    if claim.done:
        return Verdict.DUPLICATE, "this attempt already ran"
    if claim.message_id == message_id:
        return Verdict.RERUN, "redelivered after a worker stopped mid-attempt"
    if takeover is not None and takeover.matches(claim):
        return Verdict.RERUN, "taken over: its worker stopped renewing its lease"
    return Verdict.DUPLICATE, "another message for this attempt was already taken"


def postponed_here(record: JobRecord, message: ExecutionMessage, message_id: str) -> bool:
    """Whether `message`, delivered again under `message_id`, is the one whose attempt was
    made final without running (postponed, or skipped by its overlap policy)."""
    claim = step_claim(record, message)
    if claim is None or not (claim.final and claim.postponed):
        return False
    return claim.message_id == message_id and not message.manual


def before_run(
    record: JobRecord,
    collection: CollectionRecord,
    message: ExecutionMessage,
    *,
    now: datetime,
    grace: timedelta,
) -> Postpone | Wait | Start | NoAction:
    """What the claimed attempt does next. Lateness is judged at the first claim, so a Rerun
    of an attempt that started in time still runs."""
    first_claimed = claimed_at(record, message) or now
    if too_late(message, now=first_claimed, grace=grace):
        return Postpone(first_claimed)
    start_at = message.start_at
    if start_at is not None and start_at > now:
        return Wait(start_at)
    return start(record, collection, message)


def too_late(message: ExecutionMessage, *, now: datetime, grace: timedelta) -> bool:
    """Whether `message` is an occurrence's first attempt starting more than `grace` late."""
    start_at = message.start_at
    return start_at is not None and now - start_at > grace


def runs_late(record: JobRecord, message: ExecutionMessage, *, claimed_at: datetime) -> bool:
    """Whether the job's missed-run policy runs this late occurrence late (see `late`)."""
    return message.occurrence in missed_runs(
        record, record.schedule, message.occurrence, now=claimed_at
    )


def start(
    record: JobRecord, collection: CollectionRecord, message: ExecutionMessage
) -> Start | NoAction:
    """The action `message` runs on `record` as read last (with `collection`), and how."""
    action = action_of(record, message)
    if action is None:
        return NoAction()
    first = not message.manual and message.action == MAIN_ACTION and message.attempt == 0
    return Start(
        action,
        hold=first and policy_of(record) is not ConcurrencyPolicy.ALLOW,
        job_id=job_arm_id(record),
        collection_id=collection_arm_id(record),
        placeholders=record.definition.placeholders,
        signing_secrets=_signing_secrets(action, collection),
    )


def follow_up(
    record: JobRecord,
    message: ExecutionMessage,
    failure: Failure | None,
    *,
    ended: datetime,
    draw: Draw,
) -> FollowUp:
    """The next message of this occurrence after an attempt that ended at `ended` (None
    `failure`: it succeeded): a retry when the attempt's retry policy allows one (the
    errorAction's own, if it has one, else the main action's: `RetryPolicy.for_attempt`,
    looked up only for a failure), else the errorAction (the main action just faulted),
    else nothing."""
    if failure is None:
        return FollowUp(None, None, faulted_now=False)
    policy = RetryPolicy.for_attempt(record.definition, message.action)
    retry_at = policy.next_retry(
        message.attempt, failure, failed_at=ended, occurrence=message.occurrence, draw=draw
    )
    if retry_at is not None:
        return FollowUp(message.next_attempt(), retry_at, faulted_now=False)
    if message.action == ERROR_ACTION:
        return FollowUp(None, None, faulted_now=False)
    error_action = message.error_action() if record.definition.has_error_action else None
    return FollowUp(error_action, ended if error_action else None, faulted_now=True)


def policy_of(record: JobRecord) -> ConcurrencyPolicy:
    return record.definition.concurrency_policy


def action_of(record: JobRecord, message: ExecutionMessage) -> Mapping[str, Any] | None:
    if message.action == ERROR_ACTION:
        error_action = record.definition.error_action
        return None if error_action is None else error_action.document
    return record.definition.action.document


def action_type(record: JobRecord, message: ExecutionMessage) -> str | None:
    """The type of the action `message` names (None: no such action, or not readable)."""
    return record.definition.action_type(error_action=message.action == ERROR_ACTION)


def job_arm_id(record: JobRecord) -> str:
    """The job's ARM resource id, in the spellings the user created it with."""
    return f"{collection_arm_id(record)}/jobs/{record.name}"


def collection_arm_id(record: JobRecord) -> str:
    return (
        f"/subscriptions/{record.subscription_id}/resourceGroups/{record.resource_group}"
        f"/providers/Microsoft.Scheduler/jobCollections/{record.collection_name}"
    )


def _signing_secrets(action: Mapping[str, Any], collection: CollectionRecord) -> tuple[str, ...]:
    """The job's own collection's signing secrets, for an HTTP action (read at each attempt,
    so a rotation applies at once and no secret is ever copied into a job): from the
    `collection` the attempt's claim read (for an early delivery, the read before the wait
    unless the claim at the second had to read again), so it is not read again for them."""
    if action.get("type") not in ("Http", "Https"):
        return ()
    return signing.values(collection.properties)
