"""Steps 6 and 7 of an attempt whose history entry is written (see `execute`): send its
follow-up (`decide.follow_up`: a retry, the errorAction, or nothing), then apply it to the
job; and the redelivered attempt that only needs those.

The executor writes an attempt's history entry right after the action and only then updates
the job (`claims.finish`, an ETag loop). When that update cannot be written (the job kept
changing through every try, or storage failed) the invocation fails and the queue redelivers
the message with the same id, which the claim judges a Rerun. A Rerun is meant for a worker
that died inside the action; one whose entry is already written did not, and running it again
would call the target twice with the same `x-ms-execution-tag`: `history.recorded_attempt`
finds the entry, and the executor concludes the attempt from it ("Recorded") instead.

It answers with what it did (`Concluded`); the executor makes its report of that.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime
from enum import Enum

from scheduler_lib.actions import ActionOutcome
from scheduler_lib.domain import HistoryStatus, JobRecord
from scheduler_lib.domain.executor_state import executor_state
from scheduler_lib.domain.history_counter import HistoryCounter
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.domain.outcomes import JobTurn
from scheduler_lib.execution import claims, decide, overlap, pause
from scheduler_lib.execution.backoff import Draw, Failure
from scheduler_lib.store import (
    HistoryEntry,
    TableStore,
    add_history,
    park_message,
    request_history_purge,
)
from scheduler_lib.store.execution_queue import MAX_DELAY, ExecutionQueue
from scheduler_lib.timeutil import Clock


@dataclass(frozen=True)
class Concluded:
    """What followed the attempt: its follow-up (None: the occurrence is over), when and how
    it was delivered, and the job as written (None: deleted while the action ran)."""

    follow_up: ExecutionMessage | None
    follow_up_at: datetime | None
    delivery: Delivery | None
    saved: JobRecord | None
    #: How the attempt's end changed the job (streak, state; for notifications), if written.
    turn: JobTurn | None = None


@dataclass(frozen=True)
class Finish:
    """What follows an attempt whose history entry is written (steps 6 and 7)."""

    store: TableStore
    queue: ExecutionQueue
    record: JobRecord
    message: ExecutionMessage
    message_id: str
    clock: Clock
    draw: Draw = random.random  # the executor's random source (an Exponential delay)

    def conclude(
        self,
        entry: HistoryEntry,
        outcome: ActionOutcome | None = None,
        *,
        resumed: bool = False,
        counter: HistoryCounter | None = None,
    ) -> Concluded:
        """Send the follow-up, then apply the attempt to the job. `resumed`: the attempt ran
        in an earlier delivery (its follow-up's delay counts from now). `counter`: the
        history counter as the entry left it, kept as the job's snapshot."""
        store, record, message = self.store, self.record, self.message
        succeeded, ended = entry.status == HistoryStatus.COMPLETED, entry.end_time
        failure = None if succeeded else Failure.of(outcome, entry.message)
        follow = decide.follow_up(record, message, failure, ended=ended, draw=self.draw)
        delivery = None
        if follow.message is not None and follow.at is not None:
            delivery = deliver(
                follow.message,
                visible_at=follow.at,
                now=self.clock() if resumed else ended,
                queue=self.queue,
                store=store,
            )
        faulted_now, final = follow.faulted_now, follow.message is None
        attempt = claims.Attempt(succeeded, entry.start_time, faulted_now, final, counter)
        saved = claims.finish(store, record, message, self.message_id, attempt, now=self.clock())
        paused = saved is not None and pause.paused_now(saved, faulted_now=faulted_now)
        if saved is not None and paused:
            add_history(store, pause.pause_entry(saved, message, entry, now=self.clock()))
        if saved is not None and final and executor_state(saved).buffered is not None:
            overlap.release(store, self.queue, saved, now=self.clock())  # one waits (BufferOne)
        if saved is None:
            # Deleted while the action ran: the purge of its history may be over already; do
            # not leave this attempt's entry behind as an orphan.
            request_history_purge(store, record.history_key)
        turn = None if saved is None else JobTurn(
            record.consecutive_failures, saved.consecutive_failures, record.state, saved.state,
            paused,
        )  # fmt: skip
        return Concluded(follow.message, follow.at, delivery, saved, turn)


class Delivery(Enum):
    """How a follow-up message left the executor."""

    QUEUED = "Queued"  # sent to the execution queue with a visibility delay
    PARKED = "Parked"  # the delay exceeds the queue's limit: parked in the due index


def deliver(
    message: ExecutionMessage,
    *,
    visible_at: datetime,
    now: datetime,
    queue: ExecutionQueue,
    store: TableStore,
) -> Delivery:
    """Make `message` appear at `visible_at`: through the queue when its delay allows,
    otherwise parked in the due index (one row per job and tag, so a repeat is harmless)."""
    if visible_at - now > MAX_DELAY:
        park_message(store, message.job_key, message.execution_tag, message.to_json(), visible_at)
        return Delivery.PARKED
    queue.send(message, visible_at=visible_at, now=now)
    return Delivery.QUEUED
