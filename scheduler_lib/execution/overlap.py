"""Extension 2 (2026-12-01): a job's `concurrencyPolicy`, what a scheduled occurrence does
when the previous one is still running (retries included).

"Running" is read from the job's claims (`domain/executor_state.py`): another scheduled
occurrence whose claim is not final has an attempt in flight or a retry (or its errorAction)
still to come. Manual runs (`POST .../run`) neither count nor wait: the user asked for them.

- `Allow` (the default; 2016-03-01's behaviour): it runs alongside.
- `Forbid`: it is not run; its history gets one `Skipped` entry saying why, it is not
  counted (as a Postponed occurrence: its place in `recurrence.count` is given back).
- `BufferOne`: its message is kept in the job (`ExecutorState.buffered`) instead of its
  claim, and sent again, marked `buffered`, by the executor that finishes the running
  occurrence (`release`), so it starts as soon as that one ends and is never judged late. At
  most one waits: another occurrence due meanwhile is Skipped.

The decision is taken on the job as the claim wrote it (an ETag write), so of two occurrences
claimed at once exactly one sees the other. Buffering is written ETag-conditionally only while
the other occurrence still runs; if it ended in between, the occurrence runs at once. The
buffered message is sent before it is cleared: a crash in between sends it twice at most,
and the second copy is a Duplicate of the first's claim.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from enum import Enum

from scheduler_lib.domain import ConcurrencyPolicy, HistoryStatus, JobRecord
from scheduler_lib.domain.executor_state import executor_state
from scheduler_lib.domain.messages import MAIN_ACTION, ExecutionMessage
from scheduler_lib.execution import claims, lifecycle
from scheduler_lib.execution.decide import policy_of
from scheduler_lib.execution.history import already_recorded, not_run_entry
from scheduler_lib.execution.late import close_not_run
from scheduler_lib.store import TableStore, add_history
from scheduler_lib.store.execution_queue import ExecutionQueue
from scheduler_lib.timeutil import iso_z


class Overlap(Enum):
    RUN = "Run"
    SKIPPED = "Skipped"
    BUFFERED = "Buffered"


def hold(
    store: TableStore, record: JobRecord, message: ExecutionMessage, *, now: datetime
) -> Overlap:
    """Run, skip or buffer the claimed `message` (see the module docstring)."""
    policy = policy_of(record)
    first = not message.manual and message.action == MAIN_ACTION and message.attempt == 0
    if policy is ConcurrencyPolicy.ALLOW or not first:
        return Overlap.RUN
    tag = message.execution_tag
    state = executor_state(record)
    if not state.running(besides=tag):
        return Overlap.RUN
    mine = replace(message, buffered=True).to_json()
    if policy is ConcurrencyPolicy.BUFFER_ONE and state.buffered in (None, mine):
        saved = claims.apply(store, record, message, lambda current: _buffered(current, message))
        if saved is None:
            return Overlap.SKIPPED  # deleted meanwhile: nothing to run
        state = executor_state(saved)
        if state.buffered == mine:
            return Overlap.BUFFERED
        if not state.running(besides=tag):
            return Overlap.RUN
        record = saved
    reason = (
        "another occurrence was already waiting for it"
        if policy is ConcurrencyPolicy.BUFFER_ONE
        else "concurrencyPolicy is Forbid"
    )
    skip(store, record, message, f"the previous occurrence was still running and {reason}", now)
    return Overlap.SKIPPED


def _buffered(record: JobRecord, message: ExecutionMessage) -> JobRecord:
    """`record` with `message` waiting instead of claimed, if the other one still runs."""
    state = executor_state(record)
    if not state.running(besides=message.execution_tag) or state.buffered is not None:
        return record
    others = {t: c for t, c in state.claims.items() if t != message.execution_tag}
    state = replace(state, claims=others, buffered=replace(message, buffered=True).to_json())
    return lifecycle.with_state(record, state)


def skip(
    store: TableStore, record: JobRecord, message: ExecutionMessage, reason: str, now: datetime
) -> JobRecord | None:
    """One Skipped entry (once, also under redelivery), the claim made final, nothing counted."""
    if not already_recorded(store, record, message, HistoryStatus.SKIPPED.value):
        text = f"Skipped the occurrence due at {iso_z(message.occurrence)}: {reason}."
        add_history(store, not_run_entry(record, message, HistoryStatus.SKIPPED, text, now=now))
    return close_not_run(store, record, message, now=now)


def release(
    store: TableStore, queue: ExecutionQueue, saved: JobRecord, *, now: datetime
) -> ExecutionMessage | None:
    """Send the waiting occurrence of `saved` (a job whose occurrence just ended) once
    nothing else runs, then forget it; the message sent, if any."""
    state = executor_state(saved)
    waiting = state.buffered
    if waiting is None or state.running(besides=""):
        return None
    message = ExecutionMessage.from_json(waiting)
    queue.send(message, visible_at=now, now=now)

    def cleared(current: JobRecord) -> JobRecord:
        state = executor_state(current)
        if state.buffered != waiting:
            return current
        return lifecycle.with_state(current, replace(state, buffered=None))

    claims.apply(store, saved, message, cleared)
    return message
