"""A job as the scheduler knows it: its definition, state, counters and bookkeeping.

No storage here: `store/jobs.py` reads and writes these records, everyone else passes them
around. `definition` is the job's `JobDefinition` (`domain/definition.py`); how a record
is shown on the wire (its `status` object included) is `wire/jobs.py`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from scheduler_lib.domain.bookkeeping import Bookkeeping
from scheduler_lib.domain.definition import JobDefinition
from scheduler_lib.domain.json_values import JSONObject
from scheduler_lib.domain.keys import SEPARATOR, collection_key, job_key
from scheduler_lib.domain.vocabulary import JobState
from scheduler_lib.schedule import Schedule


@dataclass(frozen=True)
class JobRecord:
    """A job as stored: its definition (the job properties minus state and status), its
    state and what the scheduler counts and keeps beside them."""

    subscription_id: str
    resource_group: str
    collection_name: str
    name: str
    definition: JobDefinition
    created_time: datetime
    state: JobState = JobState.ENABLED
    execution_count: int = 0
    failure_count: int = 0
    faulted_count: int = 0
    #: Faulted occurrences in a row, ended by a success (extension 8: a job is disabled when
    #: it reaches its `JobDefinition.pause_after`; 0 when enabled again).
    consecutive_failures: int = 0
    last_execution_time: datetime | None = None
    next_execution_time: datetime | None = None
    bookkeeping: Bookkeeping = field(default_factory=Bookkeeping)
    etag: str | None = None
    #: Which life of the name this is: a job deleted and created again under the same name is
    #: a new incarnation, so what belongs to the old one (its due-index row, its history being
    #: deleted in the background) can never be mistaken for the new one's. Empty for jobs
    #: stored before incarnations existed.
    incarnation: str = ""
    #: The history partition, when it is not the job key: a job created while the history of
    #: a deleted job of the same name was still being purged gets its own (`history_purge`).
    history_partition: str = ""
    #: How the client wrote what `definition` holds in canonical form, where a 2016-03-01
    #: answer shows it as written (`wire/original_form.py`: TimeSpan durations by path, the
    #: defaults it left out). Empty for a job stored before this existed: its answers show
    #: the canonical form.
    original_form: JSONObject = field(default_factory=dict)
    #: When the dead-man switch (its window: `domain.deadman`) found the job
    #: overdue; None while it is not (`notify/deadman.py` sets and clears it).
    overdue_since: datetime | None = None

    @property
    def collection_key(self) -> str:
        return collection_key(self.subscription_id, self.resource_group, self.collection_name)

    @property
    def key(self) -> str:
        """The job's identity in the due index and the history table."""
        return job_key(self.subscription_id, self.resource_group, self.collection_name, self.name)

    @property
    def history_key(self) -> str:
        """The job's PartitionKey in the history table: its key, unless it has its own."""
        return self.history_partition or self.key

    @property
    def schedule(self) -> Schedule:
        """The job's schedule, built once per definition (ValidationError if it is corrupt)."""
        return self.definition.schedule(self.created_time)

    def own_history_key(self) -> str:
        """A history partition of this incarnation alone (see `history_partition`)."""
        return f"{self.key}{SEPARATOR}{self.incarnation}"

    def upcoming_execution(self, now: datetime) -> datetime | None:
        """The job's next execution as of `now`: the earliest occurrence that has not
        started — one already sent to the executor and not yet due, else
        `next_execution_time`. None for a job that is not Enabled: nothing of it will run
        (the executor drops what was sent; a Completed or Faulted job keeps the time it
        stopped at, a Disabled one the time it would resume at), so no time is shown."""
        if self.state != JobState.ENABLED:
            return None
        pending = [t for t in self.bookkeeping.sent if t > now]
        if pending:
            return pending[0]
        return self.next_execution_time
