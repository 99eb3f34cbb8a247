"""The executor: one execution message -> one attempt of an action, its history, what follows.

`Executor.handle` is what the queue-triggered function calls for each message. In order:
1. Parse. A malformed body raises ValidationError: it will never become valid, and the Functions
   host moves it to the poison queue after 5 dequeues, where it stays for inspection (dropping
   it would lose the evidence).
2. Look the job up fresh (messages carry no definition). The job or its collection gone, or the
   collection disabled -> dropped. A scheduled message of a job that is not Enabled (Disabled,
   Completed, Faulted) -> dropped, and the rest of its occurrence with it. A manual run
   (`POST .../run`) runs whatever the job's state: the user asked for it explicitly, and the API
   decides whether to accept that request; a disabled collection still stops it.
3. De-duplicate: claim the attempt in the job entity with an ETag-conditional write before
   running it (`claims`; the rules are in `lifecycle`). A duplicate is skipped. The claim
   holds a lease, renewed while the attempt runs, and a watchdog message takes the attempt
   over within seconds if its worker dies (`lease`, `heartbeat`, `watchdog`): a watchdog
   message is handled here too, and its takeover runs as a Rerun, its entry marked [Rerun].
   An attempt with an exact start (`ExecutionMessage.start_at`: a scheduled occurrence) is
   delivered 1-2 s early so that this happens before its second; the executor then waits
   for the second itself (`sleep`), so the action starts on time rather than up to a polling
   interval plus a second late, and reads the job again (`claims.confirm`): a job deleted,
   created again or disabled during that wait does not run the occurrence (a successor
   created before the second runs it, once). A message delivered far earlier than that (a
   clock far off) is not held: it is sent again to appear at its time ("Deferred") and this
   copy ends. One delivered more than the grace period late is not run but Postponed
   (`execute_late`). A Rerun whose history entry is already written ran its action and only
   failed to update the job (step 7 gave up): it goes on from step 6 ("Recorded",
   `finish`) instead of calling the target again.
4. Run the action once (`actions.run_action`) with an ExecutionContext naming the job by its ARM
   id (original spellings) and the occurrence by its tag; time it with `clock`.
5. Write one history entry: MainAction/ErrorAction, Completed/Failed, start/end/expected time,
   retryCount = attempt, repeatCount = occurrence number (0 for a manual run), message = the
   action's outcome message (status code and the first 2048 bytes of the answer, or the error).
6. Follow up (see `retry`): a failed attempt with retries left -> the next attempt after
   retryInterval; retries of the main action exhausted -> the errorAction, if any, at once,
   under the main action's policy unless it has its own. The follow-up is sent BEFORE the job
   is updated, so a crash in between leaves the claim not done and the redelivered message
   runs again rather than losing the occurrence.
7. Update the job (ETag-conditional, re-read and re-applied on conflict): counters, the claim
   marked done, and Completed/Faulted after the job's last occurrence (see `lifecycle`). A job
   deleted while its action ran keeps no history (its purge is requested again).

An exception from the action layer itself (a bug, or a stored definition it cannot send) is a
failed attempt like a failing target (`run_action` records it), so it follows the retry policy
and the errorAction. A message that still fails five times (storage down) is poisoned, and the
poison-queue function records that in the job's history (`poisoned`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from scheduler_lib.actions import ActionOutcome, ExecutionContext, run_action
from scheduler_lib.config import Settings
from scheduler_lib.domain import CollectionRecord, HistoryStatus, JobRecord
from scheduler_lib.domain.messages import ERROR_ACTION, ExecutionMessage
from scheduler_lib.execution import claims, heartbeat, lifecycle, outcomes, overlap, watchdog
from scheduler_lib.execution import finish as execute_finish
from scheduler_lib.execution import late as execute_late
from scheduler_lib.execution.report import ExecutionReport, log_report
from scheduler_lib.execution.retry import RetryPolicy
from scheduler_lib.store import HistoryEntry, TableStore, add_history
from scheduler_lib.store.execution_queue import EARLY_DELIVERY, ExecutionQueue
from scheduler_lib.timeutil import Clock
from scheduler_lib.wire import signing

__all__ = ["ExecutionReport", "Executor"]

#: Table storage caps a string property at 64 KiB (32K UTF-16 characters); an outcome message
#: is normally far shorter (headers plus at most 2048 bytes of body).
HISTORY_MESSAGE_LIMIT = 16_000

#: What starts the history message of an attempt run again because its worker stopped in
#: the middle of it: same occurrence, action, retryCount and execution tag.
RERUN_MARK = "[Rerun] "

#: The longest an executor holds a message for its exact start: the early delivery plus its
#: one-second rounding, plus a margin for clocks a little apart. Anything earlier is deferred.
MAX_START_WAIT = EARLY_DELIVERY + timedelta(seconds=3)


def job_arm_id(record: JobRecord) -> str:
    """The job's ARM resource id, in the spellings the user created it with."""
    return f"{collection_arm_id(record)}/jobs/{record.name}"


def collection_arm_id(record: JobRecord) -> str:
    return (
        f"/subscriptions/{record.subscription_id}/resourceGroups/{record.resource_group}"
        f"/providers/Microsoft.Scheduler/jobCollections/{record.collection_name}"
    )


@dataclass(frozen=True)
class Executor:
    """The queue trigger's work, built once per worker (`runtime.Runtime`) with what every
    message needs: storage, the queue, settings, and the entry point's `clock` and `sleep`
    (tests hand in a manual pair). `action_adapters` go to `run_action` (e.g. a Service Bus
    `sender_factory`, a CA bundle as `verify`)."""

    store: TableStore
    queue: ExecutionQueue
    settings: Settings
    clock: Clock
    sleep: Callable[[float], None]
    action_adapters: Mapping[str, Any] = field(default_factory=dict)
    #: Uniform draws in [0, 1) for an Exponential retry's full jitter (tests seed their own).
    draw: Callable[[], float] = random.random

    def handle(self, body: str, *, message_id: str, dequeue_count: int) -> ExecutionReport:
        """Process one execution message (see the module docstring)."""
        return _handle(self, body, message_id=message_id, dequeue_count=dequeue_count)


def _handle(
    executor: Executor, body: str, *, message_id: str, dequeue_count: int
) -> ExecutionReport:
    store, queue, clock = executor.store, executor.queue, executor.clock
    message = ExecutionMessage.from_json(body)
    action_type: str | None = None  # known once the claim has read the job

    def report(disposition: str, reason: str, **extra: Any) -> ExecutionReport:
        result = ExecutionReport(
            disposition, reason, message.job_key, message.execution_tag, message.action,
            message.attempt, action_type=action_type, start_at=message.start_at, **extra,
        )  # fmt: skip
        log_report(result, message)
        return result

    takeover = None
    if message.watchdog:
        looked = watchdog.look(store, queue, message, now=clock())
        if looked.takeover is None:
            return report(looked.disposition, looked.reason)
        message, takeover = message.watched(), looked.takeover

    start_at = message.start_at
    if start_at is not None and start_at - clock() > MAX_START_WAIT:
        queue.send(message, visible_at=start_at, now=clock())
        return report("Deferred", f"delivered early; sent again for {start_at.isoformat()}")

    claimed = claims.claim(store, message, message_id, now=clock(), takeover=takeover)
    if isinstance(claimed, claims.Skip):
        if claimed.postponed is not None:  # redelivered: its late run may not have been sent
            grace, postponed = executor.settings.grace_period, claimed.postponed
            execute_late.resend_late_run(queue, postponed, message, grace=grace, now=clock())
        return report(claimed.disposition, claimed.reason)
    record, verdict, collection = claimed
    action_type = outcomes.action_type(record, message)
    attempt = _Claimed(executor, message, message_id, verdict, report, dequeue_count)
    with heartbeat.watched(store, queue, message, message_id, clock) as beat:
        return attempt.run(record, collection, beat)


@dataclass(frozen=True)
class _Claimed:
    """An attempt this worker claimed (steps 3-7), watched by its lease (`heartbeat`)."""

    executor: Executor
    message: ExecutionMessage
    message_id: str
    verdict: lifecycle.Verdict
    report: Callable[..., ExecutionReport]
    dequeue_count: int

    def run(
        self, record: JobRecord, collection: CollectionRecord, beat: heartbeat.Heartbeat
    ) -> ExecutionReport:
        executor, message, message_id, report = (
            self.executor, self.message, self.message_id, self.report
        )  # fmt: skip
        store, queue, settings, clock = (
            executor.store, executor.queue, executor.settings, executor.clock
        )  # fmt: skip
        rerun = self.verdict is lifecycle.Verdict.RERUN
        # Judged at the first claim: a Rerun of an attempt that started in time still runs.
        claimed_at = lifecycle.claimed_at(record, message) or clock()
        grace = settings.grace_period
        if execute_late.too_late(message, now=claimed_at, grace=grace):
            late = execute_late.postpone_late(
                store, queue, record, message, rerun=rerun, claimed_at=claimed_at, now=clock(),
                grace=grace,
            )  # fmt: skip
            reason = "started later than the grace period"
            return report("Postponed", reason, job_state=_state(late))

        start_at = message.start_at
        if start_at is not None:
            early = (start_at - clock()).total_seconds()
            if early > 0:
                executor.sleep(early)
                confirmed = claims.confirm(store, message, now=clock())
                if isinstance(confirmed, claims.Skip):
                    return report(confirmed.disposition, confirmed.reason)
                record, collection = confirmed

        # A Rerun decides again: what ran before it is still running only if it skipped then.
        held = overlap.hold(store, record, message, now=clock())
        if held is not overlap.Overlap.RUN:
            return report(held.value, f"concurrencyPolicy {overlap.policy_of(record).value}")

        action = _action_of(record, message)
        if action is None:  # the errorAction was removed after the main action faulted
            # The occurrence is over (faulted); the job may be complete.
            now = clock()
            gone = claims.Attempt(succeeded=False, started=now, faulted_now=False, final=True)
            over = claims.finish(store, record, message, message_id, gone, now=now)
            reason = "the job has no errorAction any more"
            return report("Dropped", reason, job_state=_state(over))
        policy = RetryPolicy.for_attempt(record.definition, message.action)
        after = execute_finish.Finish(
            store, queue, record, message, message_id, policy, clock, executor.draw
        )
        if rerun:
            entry = execute_finish.recorded_attempt(store, record, message)
            if entry is not None:  # it ran; only the job's update was lost
                why = "its action already ran"
                return after.conclude(entry, report, "Recorded", why, resumed=True)
        if beat.lost:  # cut off long enough to be taken over: the other worker runs it
            return report("Duplicate", "its lease was taken over before the action started")

        started = clock()  # the instant the action starts is the one its request says it was sent
        context = ExecutionContext(
            job_id=job_arm_id(record),
            job_collection_id=collection_arm_id(record),
            expected_execution_time=message.occurrence,
            execution_tag=message.execution_tag,
            retry_count=message.attempt,
            occurrence_number=message.occurrence_number,
            placeholders=record.definition.placeholders,
            signing_secrets=_signing_secrets(action, collection),
            sent_at=started,
            action_name=message.action,
        )
        adapters = dict(executor.action_adapters or {})
        outcome = run_action(action, context, settings, **adapters)
        ended = clock()
        entry = add_history(
            store, _history_entry(record, message, outcome, started, ended, rerun=rerun)
        )

        disposition = "Rerun" if rerun else "Ran"
        reason = f"{self.verdict.value}: dequeue {self.dequeue_count}"
        return after.conclude(entry, report, disposition, reason, outcome=outcome)


def _action_of(record: JobRecord, message: ExecutionMessage) -> Mapping[str, Any] | None:
    if message.action == ERROR_ACTION:
        error_action = record.definition.error_action
        return None if error_action is None else error_action.document
    return record.definition.action.document


def _signing_secrets(action: Mapping[str, Any], collection: CollectionRecord) -> tuple[str, ...]:
    """The job's own collection's signing secrets, for an HTTP action (read at each attempt,
    so a rotation applies at once and no secret is ever copied into a job): from the
    `collection` the attempt's last read of the job found it by (the exact start's
    confirmation at the second, else the claim), so it is not read again for them."""
    if action.get("type") not in ("Http", "Https"):
        return ()
    return signing.values(collection.properties)


def _history_entry(
    record: JobRecord,
    message: ExecutionMessage,
    outcome: ActionOutcome,
    started: datetime,
    ended: datetime,
    *,
    rerun: bool,
) -> HistoryEntry:
    text = outcome.message
    if len(text) > HISTORY_MESSAGE_LIMIT:
        text = text[: HISTORY_MESSAGE_LIMIT - 15] + " ...(truncated)"
    status = HistoryStatus.COMPLETED if outcome.succeeded else HistoryStatus.FAILED
    if rerun:  # the same attempt again: its worker stopped mid-attempt (`lease`)
        text = RERUN_MARK + text
    if message.catch_up:  # a late run on purpose says so (docs/extensions.md)
        text = f"[{message.catch_up}] " + text
    return execute_late.attempt_entry(record, message, status, text, started=started, ended=ended)


def _state(record: JobRecord | None) -> str | None:
    return None if record is None else record.state
