"""The history entries the executor writes for one attempt of an action: one that ran
(`attempt_record`), one that did not (`not_run_entry`: postponed, skipped, poisoned), and
whether a redelivered message already wrote its entry (`recorded_attempt` for one that ran,
see `finish`; `already_recorded` for one that did not).

Every entry names its attempt the same way (expected execution time, action, retryCount =
attempt, repeatCount = occurrence number, 0 for a manual run), whichever module writes it.
"""

from __future__ import annotations

from datetime import datetime

from scheduler_lib.actions import ActionOutcome
from scheduler_lib.domain import HistoryStatus, JobRecord
from scheduler_lib.domain.executor_state import claimed_at, executor_state
from scheduler_lib.domain.history_counter import HistoryCounter
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.store import HistoryEntry, TableStore, add_counted_history, list_history

#: Table storage caps a string property at 64 KiB (32K UTF-16 characters); an outcome message
#: is normally far shorter (headers plus at most 2048 bytes of body).
HISTORY_MESSAGE_LIMIT = 16_000

#: What starts the history message of an attempt run again because its worker stopped in
#: the middle of it: same occurrence, action, retryCount and execution tag.
RERUN_MARK = "[Rerun] "

#: Newest history entries searched. A redelivery comes seconds to minutes after the attempt
#: (the queue's retry delay or visibility timeout), so its entry is among the newest few.
RECENT = 20
RAN = (HistoryStatus.COMPLETED, HistoryStatus.FAILED)


def attempt_record(
    record: JobRecord,
    message: ExecutionMessage,
    outcome: ActionOutcome,
    started: datetime,
    ended: datetime,
    *,
    rerun: bool,
) -> HistoryEntry:
    """The entry of an attempt that ran: Completed/Failed, the action's outcome message."""
    text = outcome.message
    if len(text) > HISTORY_MESSAGE_LIMIT:
        text = text[: HISTORY_MESSAGE_LIMIT - 15] + " ...(truncated)"
    status = HistoryStatus.COMPLETED if outcome.succeeded else HistoryStatus.FAILED
    if rerun:  # the same attempt again: its worker stopped mid-attempt (`lease`)
        text = RERUN_MARK + text
    if message.catch_up:  # a late run on purpose says so (docs/extensions.md)
        text = f"[{message.catch_up}] " + text
    return attempt_entry(record, message, status, text, started=started, ended=ended)


def add_attempt(
    store: TableStore, record: JobRecord, entry: HistoryEntry
) -> tuple[HistoryEntry, HistoryCounter | None]:
    """Write the entry of an attempt that ran, with the job's history counter as the
    executor's last entry left it (`HistoryCounter`: one transaction, no read of the counter,
    while no one else changed it); returns the entry and the counter as written, which the
    finish stores as the next snapshot."""
    return add_counted_history(store, entry, known=executor_state(record).history)


def not_run_entry(
    record: JobRecord, message: ExecutionMessage, status: str, text: str, *, now: datetime
) -> HistoryEntry:
    """The history entry of an attempt that did not run (postponed, poisoned), at `now`."""
    return attempt_entry(record, message, status, text, started=now, ended=now)


def attempt_entry(
    record: JobRecord,
    message: ExecutionMessage,
    status: str,
    text: str,
    *,
    started: datetime,
    ended: datetime,
) -> HistoryEntry:
    """The history entry of one attempt of `message`'s action (run or not) on `record`."""
    return HistoryEntry(
        job_key=record.history_key,
        start_time=started,
        end_time=ended,
        expected_execution_time=message.occurrence,
        action_name=message.action,
        status=status,
        message=text,
        retry_count=message.attempt,
        repeat_count=message.occurrence_number,
    )


def already_recorded(
    store: TableStore, record: JobRecord, message: ExecutionMessage, status: str
) -> bool:
    """Whether the job's newest entry of `status` (Postponed, Skipped) is `message`'s
    occurrence's: a redelivery after a crash between that entry and `close_not_run`."""
    newest, _ = list_history(store, record.history_key, status=status, page_size=1)
    return bool(newest) and newest[0].expected_execution_time == message.occurrence


def recorded_attempt(
    store: TableStore, record: JobRecord, message: ExecutionMessage
) -> HistoryEntry | None:
    """The history entry `message`'s attempt wrote if its action ran, else None: same
    occurrence, action, attempt and occurrence number, started after the attempt's claim."""
    claimed = claimed_at(record, message)
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
