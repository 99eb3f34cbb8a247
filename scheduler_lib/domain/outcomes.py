"""What the dispatcher and the executor tell the rest of the system about a job's work: an
attempt that ran (`AttemptEnded`) and an occurrence whose fate is known (`OccurrenceEnded`).

Plain values, built from what the executor's and the dispatcher's reports already hold, so
no storage is read to make them. The runtime hands them to whoever observes (`Observer`):
the metrics today; a per-job dead-man switch (the last `Completed`) and notifications (a
`Faulted` or `Poisoned` occurrence) can take the same stream later.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from scheduler_lib.domain.keys import split_job_key
from scheduler_lib.domain.vocabulary import HistoryStatus, Outcome


@dataclass(frozen=True)
class AttemptEnded:
    """One attempt of an action that ran and has its history entry."""

    job_key: str
    action_type: str  # Http, Https, StorageQueue, ServiceBusQueue, ServiceBusTopic
    action: str  # MainAction | ErrorAction
    attempt: int  # 0: the first try; more: a retry
    status: HistoryStatus  # Completed | Failed
    started: datetime
    ended: datetime
    #: The second the attempt was scheduled to start at (a scheduled occurrence's first
    #: attempt, jitter included), else None: retries, manual and late runs have none.
    scheduled_start: datetime | None = None

    @property
    def lateness(self) -> float | None:
        """Seconds from the scheduled second to the request's start (never below 0)."""
        if self.scheduled_start is None:
            return None
        return max(0.0, (self.started - self.scheduled_start).total_seconds())

    @property
    def duration(self) -> float:
        return max(0.0, (self.ended - self.started).total_seconds())


@dataclass(frozen=True)
class JobTurn:
    """What an occurrence's end did to its job (the notifications' de-duplication reads it:
    a `Failed` per streak, `Recovered` when one ends, `Paused`, `Faulted`)."""

    streak_before: int  # faulted occurrences in a row before this one ended
    streak_after: int
    state_before: str
    state_after: str
    paused: bool = False  # stop-after-failures (`pause_after`) disabled it now


@dataclass(frozen=True)
class OccurrenceEnded:
    """An occurrence (or a manual run) whose outcome is decided."""

    job_key: str
    action_type: str
    outcome: Outcome
    #: The occurrence's execution tag (the executor's events; "" from the dispatcher).
    execution_tag: str = ""
    #: How it changed the job, when the executor wrote it (None: not known).
    turn: JobTurn | None = None
    #: When its last attempt ended (its history entry's end), when one ran.
    ended: datetime | None = None


def collection_of(job_key: str) -> str:
    """The collection's name (lower-cased, as in the key) of a job key."""
    return split_job_key(job_key)[2]


def job_path(job_key: str) -> str:
    """`collection/job` (lower-cased) of a job key: a job's name, unique within its group."""
    _, _, collection, job = split_job_key(job_key)
    return f"{collection}/{job}"


Event = AttemptEnded | OccurrenceEnded
#: Whoever takes the events (the runtime's fan-out); must not raise into the caller's work.
Observer = Callable[[Event], None]


def ignore(event: Event) -> None:
    """The observer of a component nobody watches (tests, the API's immediate dispatch)."""
