"""What became of one execution message (`ExecutionReport`); the executor writes the one
log line about it (`Executor.handle_message`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from scheduler_lib.actions import ActionOutcome
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.domain.outcomes import JobTurn
from scheduler_lib.execution.finish import Delivery
from scheduler_lib.store import HistoryEntry


@dataclass(frozen=True)
class ExecutionReport:
    """What became of one message; the entry point logs it (never holds a secret)."""

    #: "Ran" | "Rerun" | "Recorded" | "Duplicate" | "Dropped" | "Deferred" | "Postponed" |
    #: "Skipped" | "Buffered" (a job's overlap policy, `overlap`) | "Watched" |
    #: "Watching" (a watchdog that found nothing to take over, `watchdog`)
    disposition: str
    reason: str
    job_key: str
    execution_tag: str
    action_name: str
    attempt: int
    outcome: ActionOutcome | None = None
    history: HistoryEntry | None = None
    follow_up: ExecutionMessage | None = None
    follow_up_at: datetime | None = None
    delivery: Delivery | None = None
    job_state: str | None = None
    #: The type of the action the message names, once its job was read (metrics' label).
    action_type: str | None = None
    #: The second the attempt was to start at (`ExecutionMessage.start_at`), if it had one.
    start_at: datetime | None = None
    #: How the attempt's end changed the job (streak, state), when it wrote it.
    turn: JobTurn | None = None
