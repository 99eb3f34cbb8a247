"""The executor's side of the grace period: an occurrence that starts too late is postponed.

The dispatcher postpones what it finds missed by downtime, but it sends occurrences up to a
minute ahead, so a message queued before an outage arrives after it and would run however
late, often together with others (a burst at restart). So the executor judges lateness too:
when the first attempt of a scheduled occurrence would start more than the grace period after
its scheduled time, it is recorded as `Postponed` (like the dispatcher's postponement: one
history entry, nothing counted) and not run; the job goes on with its next occurrence.
Retries, the errorAction and manual runs are never postponed: their occurrence started in time.

The job's missed-run policy decides as it does for the dispatcher's postponement, with the same
function (`wire/missed.missed_runs`, asked about the range that starts with this occurrence,
at the instant the attempt was claimed): RunAll inside its catch-up window, or RunLatest when no
later occurrence was missed, also sends the occurrence's late run (`ExecutionMessage.late_run`,
marked `[CatchUp]`, the occurrence's own tag), which the executor then runs as it runs the
dispatcher's.

Once per occurrence, also under redelivery: the entry is written before the claim is marked
final (a crash in between leaves the claim open), and a redelivered message whose claim is
still open first looks for the entry it may already have written. The late run is sent after
the claim is final (sent before, it could meet the open claim and be judged a Duplicate); a
redelivery of the same message that finds its claim already postponed sends it again
(`resend_late_run`): a late run that already ran makes a second copy a Duplicate.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

import isodate

from scheduler_lib.domain import JobRecord
from scheduler_lib.domain.definition import MISSED_RUN_POLICY
from scheduler_lib.domain.executor_state import executor_state
from scheduler_lib.domain.messages import CATCH_UP, ExecutionMessage
from scheduler_lib.execution import claims, lifecycle
from scheduler_lib.execution.decide import runs_late, too_late
from scheduler_lib.execution.history import already_recorded, not_run_entry
from scheduler_lib.store import POSTPONED_STATUS, TableStore, add_due, add_history
from scheduler_lib.store.execution_queue import ExecutionQueue
from scheduler_lib.timeutil import iso_z

log = logging.getLogger("scheduler.execute")


def postpone_late(
    store: TableStore,
    queue: ExecutionQueue,
    record: JobRecord,
    message: ExecutionMessage,
    *,
    rerun: bool,
    claimed_at: datetime,
    now: datetime,
    grace: timedelta,
) -> JobRecord | None:
    """Record the occurrence as Postponed (once), close its claim and, if the job's policy
    runs it late, send its late run; the job as written."""
    late_run = runs_late(record, message, claimed_at=claimed_at)
    if not (rerun and already_recorded(store, record, message, POSTPONED_STATUS)):
        late = claimed_at - (message.start_at or message.occurrence)  # the jittered start
        text = (
            f"Postponed: the occurrence due at {iso_z(message.occurrence)} would have started "
            f"{round(late.total_seconds())} s late, more than the grace period "
            f"({isodate.duration_isoformat(grace)})."  # its status's word; Skipped is overlap's
        )
        if late_run:
            policy = record.definition.missed_run_policy
            text += f" Running it late ({MISSED_RUN_POLICY} {policy}), marked [CatchUp]."
        else:
            text += " The job continues at its next occurrence."
        add_history(store, not_run_entry(record, message, POSTPONED_STATUS, text, now=now))
        log.info(
            "occurrence postponed: started too late",
            extra={"job": record.key, "occurrence": iso_z(message.occurrence)},
        )
    saved = close_not_run(store, record, message, now=now)
    if saved is not None and late_run:
        queue.send(message.late_run(CATCH_UP), visible_at=now, now=now)
    return saved


def resend_late_run(
    queue: ExecutionQueue, record: JobRecord, message: ExecutionMessage, *, grace: timedelta,
    now: datetime,
) -> bool:  # fmt: skip
    """For a redelivered `message` whose claim it closed as postponed (`record` as read): send
    its late run again if the policy ran it late (the first delivery may have died before
    sending it). Whether it was sent."""
    claim = executor_state(record).claims[message.execution_tag]
    claimed_at = claim.started
    if not too_late(message, now=claimed_at, grace=grace):
        return False  # skipped by its overlap policy, not postponed for lateness
    if not runs_late(record, message, claimed_at=claimed_at):
        return False
    queue.send(message.late_run(CATCH_UP), visible_at=now, now=now)
    return True


def close_not_run(
    store: TableStore, record: JobRecord, message: ExecutionMessage, *, now: datetime
) -> JobRecord | None:
    """Close the claim of an occurrence that did not run (postponed, or skipped by its job's
    overlap policy): final, nothing counted; the job as written."""
    saved = claims.apply(
        store, record, message, lambda current: lifecycle.with_postponed(current, message, now=now)
    )
    if saved is not None and saved.next_execution_time is not None:
        # Its place in `count` given back, the job may have a new next occurrence: make sure it
        # has its row (idempotent when it already does).
        add_due(store, saved.key, saved.next_execution_time, incarnation=saved.incarnation)
    return saved
