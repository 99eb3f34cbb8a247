"""The executor: one execution message -> one attempt of an action, its history, what follows.

This module drives the state machine: it reads (through `claims`), asks `decide` what to do (the
claim answers with that decision), applies it through the module that does that I/O, and makes
the one report of the message. The rules are `decide`'s and `lifecycle`'s, the history entries
`history`'s. No module it calls calls back into it.

`Executor.handle_body` is what the queue-triggered function calls for each queue message: one
execution message, or a batch (`messages.parse_body`: occurrences starting in the same second
share one send, delete, function execution and early hold). Each member is handled as if
delivered alone (`handle_message`), under its `member_id` (its claim's owner, stable across
redeliveries) and the batch's dequeue count, all at once on the worker's `concurrent_calls`
pool, so their waits overlap, watched by one watchdog message (`batch_watchdog`). Each
runs to its end; if any raised, the invocation raises once all ended, and in the batch
redelivered the finished members are Duplicates and the failed one runs. For each message:
1. Parse. A malformed body raises ValidationError: it never becomes valid; the Functions host
   moves it to the poison queue after 5 dequeues, where it stays for inspection.
2. Look the job up fresh (messages carry no definition; a batch's members' jobs, and the
   collections they share, are read together: `claims.member_reads`). The job or its
   collection gone, or the collection disabled -> dropped. A scheduled message of a job that
   is not Enabled (Disabled, Completed, Faulted) -> dropped, and the rest of its occurrence
   with it. A manual run (`POST .../run`) runs whatever the job's state (the user asked for
   it; the API decides whether to accept it); a disabled collection still stops it.
3. De-duplicate: claim the attempt in the job entity with an ETag-conditional write before
   running it (`claims`; the verdict is `decide.judge`, the claim `lifecycle`'s). A duplicate is
   skipped. The claim holds a lease, renewed while the attempt runs, and a watchdog message
   takes the attempt over within seconds if its worker dies (`lease`, `heartbeat`, `watchdog`;
   sent with the claim, or with the first heartbeat only, as `SCHEDULER_WATCHDOG` says): a
   watchdog message is handled here too, and its takeover runs as a Rerun, its entry marked
   [Rerun]. A scheduled occurrence (`ExecutionMessage.start_at`) is delivered 1-2 s early: the
   job and its collection are read and the attempt decided before its second; the executor sends
   its watchdog, waits for the second (`sleep`: on time, not up to a polling interval plus a
   second late) and claims it then with one write conditional on the ETag read before the wait,
   whose success proves the job did not change meanwhile (`claims.claim` with `early`). Any
   change fails it, and the job and its collection are read and decided again as a fresh
   delivery at that instant: a job deleted, created again or disabled during the wait does not
   run the occurrence (a successor created before the second runs it, once), a duplicate that
   claimed first makes this one a Duplicate. Unchanged, the collection is the one read before
   the wait. A worker that dies in the wait leaves no claim: its watchdog, sent before the wait,
   runs the attempt as a late delivery of its own (`watchdog`). One delivered far earlier (a
   clock far off) is not held: it is sent again to appear at its time ("Deferred") and this copy
   ends. One delivered more than the grace period late is not run but Postponed (`late`). A
   Rerun whose history entry is already written ran its action and only failed to update the job
   (step 7): it goes on from step 6 ("Recorded", `finish`) without calling the target again.
4. Run the action once (`actions.run_action`), its ExecutionContext naming the job by its ARM id
   (original spellings) and the occurrence by its tag; time it with `clock`.
5. Write one history entry (`history.attempt_record`): action, status, times, retryCount =
   attempt, repeatCount = occurrence number (0 for a manual run), the outcome's message.
6. Follow up (`decide.follow_up`, `retry`): a failed attempt with retries left -> the next
   attempt after retryInterval; retries of the main action exhausted -> the errorAction, if any,
   at once, under the main action's policy unless it has its own. The follow-up is sent BEFORE
   the job is updated, so a crash in between leaves the claim not done and the redelivered
   message runs again rather than losing the occurrence.
7. Update the job (ETag-conditional on the heartbeat's last renewal, stopped first; re-read
   and re-applied on conflict): counters, the claim done, Completed/Faulted after the job's last
   occurrence (`lifecycle`). A job deleted while its action ran keeps no history (purged again).

An exception from the action layer (a bug, a definition it cannot send) fails the attempt as a
failing target would; a message failing 5 times (storage down) is recorded as `poisoned`.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import timedelta
from functools import partial
from typing import Any

from scheduler_lib.actions import ExecutionContext, run_action
from scheduler_lib.concurrent_calls import MEMBER_THREADS, ConcurrentCalls
from scheduler_lib.config import Settings
from scheduler_lib.domain.definition import CONCURRENCY_POLICY
from scheduler_lib.domain.messages import ExecutionMessage, member_id, parse_body
from scheduler_lib.execution import claims, decide, heartbeat, late, lease, overlap, watchdog
from scheduler_lib.execution.batch_watchdog import BatchWatchdog
from scheduler_lib.execution.finish import Finish
from scheduler_lib.execution.history import add_attempt, attempt_record, recorded_attempt
from scheduler_lib.execution.report import ExecutionReport
from scheduler_lib.shared_reads import SharedReads
from scheduler_lib.store import TableStore
from scheduler_lib.store.execution_queue import EARLY_DELIVERY, ExecutionQueue
from scheduler_lib.timeutil import Clock

__all__ = ["ExecutionReport", "Executor"]

log = logging.getLogger("scheduler.execute")

#: The longest a message is held for its start (early delivery, rounding, skew; else deferred).
MAX_START_WAIT = EARLY_DELIVERY + timedelta(seconds=3)


@dataclass(frozen=True)
class Executor:
    """The queue trigger's work, built once per worker (`runtime.Runtime`): storage, the
    queue, settings, the entry point's `clock` and `sleep` (tests hand in a manual pair);
    `action_adapters` go to `run_action` (a Service Bus `sender_factory`, a CA `verify`)."""

    store: TableStore
    queue: ExecutionQueue
    settings: Settings
    clock: Clock
    sleep: Callable[[float], None]
    action_adapters: Mapping[str, Any] = field(default_factory=dict)
    #: Uniform draws in [0, 1) for an Exponential retry's full jitter (tests seed their own).
    draw: Callable[[], float] = random.random
    #: Real seconds between the heartbeat's renewals of a claim's lease (tests shorten it).
    beat: float = lease.HEARTBEAT
    #: This worker's collection reads: claims of one collection at once share one request.
    collections: claims.CollectionReads = field(default_factory=SharedReads)
    #: This worker's threads for batch members (`MEMBER_THREADS`, shared by every batch).
    members: ConcurrentCalls = field(default_factory=lambda: ConcurrentCalls(MEMBER_THREADS))

    def handle_body(
        self, body: str, *, message_id: str, dequeue_count: int
    ) -> list[ExecutionReport | Exception]:
        """Process every attempt one queue message carries (see the module): each one's report
        or what it raised, in order; a lone message runs in this thread and raises."""
        messages = parse_body(body)
        size = len(messages)
        if size == 1:
            return [self.handle_message(messages[0], member_id=message_id,
                                        dequeue_count=dequeue_count)]  # fmt: skip
        shared = BatchWatchdog(self.queue, messages, self.clock, self.beat)
        with shared.kept(self.settings.watchdog, horizon=MAX_START_WAIT):  # for the members
            known = claims.member_reads(self.store, messages, self.collections, self.members)
            ended = self.members.run_all([
                partial(self.handle_message, message, member_id=member_id(message_id, index,
                        size), dequeue_count=dequeue_count, covered=index in shared.covered,
                        known=known.get(message.job_key))
                for index, message in enumerate(messages)
            ])  # fmt: skip
        if not any(isinstance(one, Exception) for one in ended):
            shared.discard()  # a member that raised leaves it, as a lone attempt its own
        return ended

    def handle_message(
        self, message: ExecutionMessage, *, member_id: str, dequeue_count: int,
        covered: bool = False, known: claims.Known | None = None,
    ) -> ExecutionReport:  # fmt: skip
        """Process one attempt, claimed under `member_id` (see the module docstring; `covered`:
        watched by its batch's watchdog; `known`: its job as its batch read it); one log line."""
        done = _handle(self, message, member_id, dequeue_count, covered, known)
        message, entry = done.message, done.fields.get("history")
        took = round((entry.end_time - entry.start_time).total_seconds() * 1000) if entry else None
        report = ExecutionReport(
            done.disposition, done.reason, message.job_key, message.execution_tag,
            message.action, message.attempt, action_type=done.action_type,
            start_at=message.start_at, **done.fields,
        )  # fmt: skip
        log.info(
            "execution %s: %s", report.disposition, report.reason,
            extra={
                "job": report.job_key, "occurrence": message.occurrence.isoformat(),
                "tag": report.execution_tag, "action": report.action_name,
                "attempt": report.attempt, "outcome": entry.status if entry else None,
                "duration_ms": took,
            },
        )  # fmt: skip
        return report


@dataclass(frozen=True)
class _Done:
    """What became of a message: the report's disposition, reason and further fields."""

    message: ExecutionMessage
    disposition: str
    reason: str
    action_type: str | None = None
    fields: Mapping[str, Any] = field(default_factory=dict)


def _skipped(
    executor: Executor, skip: decide.Skip, message: ExecutionMessage, kind: str | None = None
) -> _Done:
    """A message that does not run (`skip`); one whose own attempt was postponed before
    (a redelivery) has its late run sent again, in case that was lost."""
    if skip.postponed is not None:
        late.resend_late_run(
            executor.queue, skip.postponed, message, grace=executor.settings.grace_period,
            now=executor.clock(),
        )  # fmt: skip
    return _Done(message, skip.disposition, skip.reason, kind)


def _handle(
    executor: Executor, message: ExecutionMessage, message_id: str, dequeue_count: int,
    covered: bool, known: claims.Known | None,
) -> _Done:  # fmt: skip
    """Steps 2-7 (see the module docstring), in order. Each step's branch ends the message
    with its `_Done`; the path of a message that runs goes straight down."""
    store, queue, settings, clock = (
        executor.store, executor.queue, executor.settings, executor.clock
    )  # fmt: skip
    takeover = None
    if message.watchdog:
        looked = watchdog.look(store, queue, message, now=clock())
        if looked.takeover is None and not looked.unclaimed:
            return _Done(message, looked.disposition, looked.reason)
        message, takeover = message.watched(), looked.takeover

    start_at = message.start_at
    if start_at is not None and start_at - clock() > MAX_START_WAIT:
        queue.send(message, visible_at=start_at, now=clock())
        return _Done(message, "Deferred", f"delivered early; sent again for {start_at.isoformat()}")

    grace, collections = settings.grace_period, executor.collections
    claimed = claims.claim(
        store, message, message_id, now=clock(), takeover=takeover, grace=grace, hold=True,
        collections=collections, known=known,
    )  # fmt: skip
    if isinstance(claimed, decide.Skip):
        return _skipped(executor, claimed, message)
    record, verdict, collection, following, kind = claimed
    wait = following if isinstance(following, decide.Wait) else None  # early: not claimed yet
    claim_at = wait.start_at if wait else None
    with heartbeat.watched(
        store, queue, message, message_id, clock,
        choice=settings.watchdog, interval=executor.beat, claim_at=claim_at, covered=covered,
        record=None if wait else record,
    ) as beat:  # fmt: skip  # the watchdog first: a worker that dies in the wait is covered
        if wait is not None:
            executor.sleep(max(0.0, (wait.start_at - clock()).total_seconds()))
            claimed = claims.claim(
                store, message, message_id, now=clock(), grace=grace, early=claimed,
                collections=collections,
            )  # fmt: skip
            if isinstance(claimed, decide.Skip):  # read again: as a fresh delivery would be
                return _skipped(executor, claimed, message, kind)
            record, verdict, collection, following, kind = claimed
            beat.known = record  # the job as the claim wrote it: the first renewal's
            beat.claimed.set()
        rerun = verdict is decide.Verdict.RERUN
        if isinstance(following, decide.Postpone):
            saved = late.postpone_late(
                store, queue, record, message, rerun=rerun, claimed_at=following.claimed_at,
                now=clock(), grace=grace,
            )  # fmt: skip
            reason = "started later than the grace period"
            state = saved.state if saved is not None else None
            return _Done(message, "Postponed", reason, kind, {"job_state": state})

        if not isinstance(following, (decide.Start, decide.NoAction)):  # None, or a clock off
            following = decide.start(record, collection, message)

        if isinstance(following, decide.NoAction):
            # The errorAction was removed after the main action faulted: the occurrence is
            # over (faulted); the job may be complete.
            now = clock()
            gone = claims.Attempt(succeeded=False, started=now, faulted_now=False, final=True)
            over = claims.finish(store, record, message, message_id, gone, now=now)
            reason = "the job has no errorAction any more"
            state = over.state if over is not None else None
            return _Done(message, "Dropped", reason, kind, {"job_state": state})

        # A Rerun decides again: what ran before it is still running only if it skipped then.
        if following.hold:
            held = overlap.hold(store, record, message, now=clock())
            if held is not overlap.Overlap.RUN:
                why = f"{CONCURRENCY_POLICY} {decide.policy_of(record).value}"
                return _Done(message, held.value, why, kind)

        after = Finish(store, queue, record, message, message_id, clock, executor.draw)
        entry = recorded_attempt(store, record, message) if rerun else None
        outcome = None
        if entry is not None:  # it ran; only the job's update was lost
            disposition, reason = "Recorded", "its action already ran"
            concluded = after.conclude(entry, resumed=True)
        elif beat.lost:  # cut off long enough to be taken over: the other worker runs it
            why = "its lease was taken over before the action started"
            return _Done(message, "Duplicate", why, kind)
        else:
            started = clock()  # the instant the action starts is the one its request says
            context = ExecutionContext(
                job_id=following.job_id, job_collection_id=following.collection_id,
                expected_execution_time=message.occurrence, execution_tag=message.execution_tag,
                retry_count=message.attempt, occurrence_number=message.occurrence_number,
                placeholders=following.placeholders, signing_secrets=following.signing_secrets,
                sent_at=started, action_name=message.action,
            )  # fmt: skip
            adapters = dict(executor.action_adapters or {})
            outcome = run_action(following.action, context, settings, **adapters)
            ended = clock()
            entry, counter = add_attempt(
                store, record, attempt_record(record, message, outcome, started, ended, rerun=rerun)
            )
            disposition = "Rerun" if rerun else "Ran"
            reason = f"{verdict.value}: dequeue {dequeue_count}"
            after = replace(after, record=beat.stop() or record)  # no renewal races the update
            concluded = after.conclude(entry, outcome, counter=counter)
    saved = concluded.saved
    return _Done(
        message, disposition, reason, kind,
        {"outcome": outcome, "history": entry, "follow_up": concluded.follow_up,
         "follow_up_at": concluded.follow_up_at, "delivery": concluded.delivery,
         "job_state": saved.state if saved is not None else None, "turn": concluded.turn},
    )  # fmt: skip
