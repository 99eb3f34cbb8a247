"""Steps 6 and 7 of an attempt whose history entry is written (see `execute`): send its
follow-up, then apply it to the job; and the redelivered attempt that only needs those.

The executor writes an attempt's history entry right after the action and only then updates
the job (`claims.finish`, an ETag loop). When that update cannot be written (the job kept
changing through every try, or storage failed) the invocation fails and the queue redelivers
the message with the same id, which the claim judges a Rerun. A Rerun is meant for a worker
that died inside the action; one whose entry is already written did not, and running it again
would call the target twice with the same `x-ms-execution-tag`: `recorded_attempt` finds the
entry, and the executor concludes the attempt from it ("Recorded") instead.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from scheduler_lib.actions import ActionOutcome
from scheduler_lib.domain import HistoryStatus, JobRecord
from scheduler_lib.domain.messages import ERROR_ACTION, ExecutionMessage
from scheduler_lib.domain.outcomes import JobTurn
from scheduler_lib.execution import claims, lifecycle, overlap, pause
from scheduler_lib.execution.backoff import Draw, Failure
from scheduler_lib.execution.report import ExecutionReport
from scheduler_lib.execution.retry import RetryPolicy, deliver
from scheduler_lib.store import (
    HistoryEntry,
    TableStore,
    add_history,
    list_history,
    request_history_purge,
)
from scheduler_lib.store.execution_queue import ExecutionQueue
from scheduler_lib.timeutil import Clock

#: Newest history entries searched. A redelivery comes seconds to minutes after the attempt
#: (the queue's retry delay or visibility timeout), so its entry is among the newest few.
RECENT = 20
RAN = (HistoryStatus.COMPLETED, HistoryStatus.FAILED)


def recorded_attempt(
    store: TableStore, record: JobRecord, message: ExecutionMessage
) -> HistoryEntry | None:
    """The history entry `message`'s attempt wrote if its action ran, else None: same
    occurrence, action, attempt and occurrence number, started after the attempt's claim."""
    claimed = lifecycle.claimed_at(record, message)
    if claimed is None:
        return None
    entries, _ = list_history(store, record.history_key, page_size=RECENT)
    for entry in entries:
        if (
            entry.status in RAN
            and entry.start_time >= claimed
            and entry.expected_execution_time == message.occurrence
            and entry.action_name == message.action
            and entry.retry_count == message.attempt
            and entry.repeat_count == message.occurrence_number
        ):
            return entry
    return None


@dataclass(frozen=True)
class Finish:
    """What follows an attempt whose history entry is written (steps 6 and 7)."""

    store: TableStore
    queue: ExecutionQueue
    record: JobRecord
    message: ExecutionMessage
    message_id: str
    policy: RetryPolicy
    clock: Clock
    draw: Draw = random.random  # the executor's random source (an Exponential delay)

    def conclude(
        self,
        entry: HistoryEntry,
        report: Callable[..., ExecutionReport],
        disposition: str,
        reason: str,
        outcome: ActionOutcome | None = None,
        *,
        resumed: bool = False,
    ) -> ExecutionReport:
        """Send the follow-up, then apply the attempt to the job; the report. `resumed`: the
        attempt ran in an earlier delivery (its follow-up's delay counts from now)."""
        store, record, message, policy = self.store, self.record, self.message, self.policy
        succeeded, ended = entry.status == HistoryStatus.COMPLETED, entry.end_time
        retry_at = None
        if not succeeded:
            failure = Failure.of(outcome, entry.message)
            retry_at = policy.next_retry(
                message.attempt, failure, failed_at=ended, occurrence=message.occurrence,
                draw=self.draw,
            )  # fmt: skip
        follow_up, faulted_now = next_message(record, message, retry_at, succeeded=succeeded)
        follow_up_at = delivery = None
        if follow_up is not None:
            follow_up_at = retry_at if retry_at is not None else ended
            delivery = deliver(
                follow_up,
                visible_at=follow_up_at,
                now=self.clock() if resumed else ended,
                queue=self.queue,
                store=store,
            )
        attempt = claims.Attempt(succeeded, entry.start_time, faulted_now, final=follow_up is None)
        saved = claims.finish(store, record, message, self.message_id, attempt, now=self.clock())
        paused = saved is not None and pause.paused_now(saved, faulted_now=faulted_now)
        if saved is not None and paused:
            add_history(store, pause.pause_entry(saved, message, entry, now=self.clock()))
        if saved is not None and follow_up is None:  # the occurrence ended: one may wait
            overlap.release(store, self.queue, saved, now=self.clock())
        if saved is None:
            # Deleted while the action ran: the purge of its history may be over already; do
            # not leave this attempt's entry behind as an orphan.
            request_history_purge(store, record.history_key)
        return report(
            disposition, reason, outcome=outcome, history=entry, follow_up=follow_up,
            follow_up_at=follow_up_at, delivery=delivery, job_state=saved.state if saved else None,
            turn=None if saved is None else JobTurn(
                record.consecutive_failures, saved.consecutive_failures, record.state,
                saved.state, paused,
            ),
        )  # fmt: skip


def next_message(
    record: JobRecord, message: ExecutionMessage, retry_at: datetime | None, *, succeeded: bool
) -> tuple[ExecutionMessage | None, bool]:
    """The next message of this occurrence (None: it is over) and whether it just faulted;
    `retry_at`: when the policy retries the failed attempt (None: it does not)."""
    if succeeded:
        return None, False
    if retry_at is not None:
        return message.next_attempt(), False
    if message.action == ERROR_ACTION:
        return None, False
    return (message.error_action() if record.definition.has_error_action else None), True
