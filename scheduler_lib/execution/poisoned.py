"""Execution messages the host gave up on: recorded in the job, not left silent in a queue.

The Functions host moves a message to `<queue>-poison` after `maxDequeueCount` (5) failed
deliveries: storage unreachable for minutes, a bug in the executor. Azure Scheduler's users
look at a job's history and status, not at queues, so the poison-queue function calls
`record_poisoned`, which turns the message into what the attempt would have left had it
failed: a `Failed` history entry saying the message was poisoned, the attempt counted as a
failure, the occurrence faulted (for the main action) and over, so the job can still complete.

A watchdog message (`watchdog`) is recorded only when it had taken its attempt over (the
claim is under its id): otherwise the attempt's own message stands for it.

Idempotent under redelivery of the poisoned message: the occurrence's claim is marked final in
the same ETag-conditional write that counts it, and a message whose occurrence is already
final is not recorded again. The history entry is written first, so a crash in between leaves
an entry and a redelivery that writes it again (rare, and visible) rather than none.
A body that is not an execution message names no job: it is logged and dropped. A batch
(`record_poisoned_body`) is recorded member by member, each in its own job, under its
`member_id` (the id its claim names); a member that had finished before is already final.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from scheduler_lib.domain import HistoryStatus
from scheduler_lib.domain.executor_state import executor_state
from scheduler_lib.domain.messages import ERROR_ACTION, ExecutionMessage, member_id, parse_body
from scheduler_lib.errors import ValidationError
from scheduler_lib.execution import claims, lifecycle
from scheduler_lib.execution.decide import action_type
from scheduler_lib.execution.history import not_run_entry
from scheduler_lib.store import HistoryEntry, TableStore, add_history, find_job

log = logging.getLogger("scheduler.poisoned")

POISONED_MESSAGE = (
    "Poisoned: the execution message of this attempt failed as many times as the host allows "
    "(maxDequeueCount) and was moved to the poison queue; the attempt did not complete and "
    "is counted as failed."
)


@dataclass(frozen=True)
class PoisonReport:
    """What became of one poisoned message: Recorded, or Dropped with the reason."""

    disposition: str
    reason: str
    history: HistoryEntry | None = None
    job_key: str = ""
    action_type: str | None = None  # of the attempt's action, when recorded


def record_poisoned_body(
    store: TableStore, body: str, *, message_id: str, now: datetime
) -> list[PoisonReport]:
    """Record each attempt a poisoned queue message carries (one, or a batch's members, one
    after the other: a redelivery after a failure records the rest, see module)."""
    try:
        messages = parse_body(body)
    except ValidationError as exc:
        log.error("poisoned message %s is not an execution message: %s", message_id, exc)
        return [PoisonReport("Dropped", "not an execution message")]
    size = len(messages)
    return [
        _record(store, message, member_id(message_id, index, size), now=now)
        for index, message in enumerate(messages)
    ]


def record_poisoned(
    store: TableStore, body: str, *, message_id: str, now: datetime
) -> PoisonReport:
    """Record a poisoned lone execution message in its job's history and status."""
    try:
        message = ExecutionMessage.from_json(body)
    except ValidationError as exc:
        log.error("poisoned message %s is not an execution message: %s", message_id, exc)
        return PoisonReport("Dropped", "not an execution message")
    return _record(store, message, message_id, now=now)


def _record(
    store: TableStore, message: ExecutionMessage, message_id: str, *, now: datetime
) -> PoisonReport:
    """Record one poisoned attempt, claimed (if ever) under `message_id` (see module)."""
    extra = {"job": message.job_key, "tag": message.execution_tag, "action": message.action}
    record = find_job(store, message.job_key)
    if record is None or not message.belongs_to(record.incarnation):
        log.warning("poisoned message of a job that no longer exists", extra=extra)
        return PoisonReport("Dropped", "the job no longer exists")
    claim = executor_state(record).claims.get(message.execution_tag)
    if claim is not None and claim.final:
        return PoisonReport("Dropped", "the occurrence is already over")
    if message.watchdog:  # only a watchdog that took its attempt over stands for it
        if claim is None or claim.message_id != message_id:
            return PoisonReport("Dropped", "a watchdog of an attempt it did not take over")
        message = message.watched()

    failed = not_run_entry(record, message, HistoryStatus.FAILED, POISONED_MESSAGE, now=now)
    entry = add_history(store, failed)
    if claim is None:  # never claimed (it failed before that): claim it, to mark it final
        record = lifecycle.with_claim(record, message, message_id, now=now)
    attempt = claims.Attempt(
        succeeded=False, started=now, faulted_now=message.action != ERROR_ACTION, final=True
    )
    claims.finish(store, record, message, message_id, attempt, now=now)
    log.error("execution message poisoned; recorded in the job's history", extra=extra)
    kind = action_type(record, message)
    return PoisonReport("Recorded", "recorded as a failed attempt", entry, record.key, kind)
