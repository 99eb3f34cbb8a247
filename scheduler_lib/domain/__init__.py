"""The scheduler's domain: jobs, job collections, their identities and their vocabulary.

Knows no storage, queue or HTTP. `store/` reads and writes these records, `wire/` turns them
into wire JSON, `dispatch/` and `execution/` change them; all of them import `domain`, and
`domain` imports none of them. It imports the schedule engine (`schedule/`, pure and below
it): a job's definition keeps the schedule it builds, so that it is built once.

`keys` (the identities every table shares), `jobs` (`JobRecord`), `definition`
(`JobDefinition`: a job's timing, policies and actions, typed; its actions in `actions`),
`bookkeeping` (what the dispatcher and the executor record beside a job; the executor's
claims in `executor_state`),
`collections` (`CollectionRecord`),
`vocabulary` (states and statuses as enums), `text` (what a stored string may hold: no lone
surrogate), `outcomes` (what an attempt or an occurrence came to, for whoever observes the
scheduler's work), `deadman` (which dead-man window watches a job).
"""

from scheduler_lib.domain.bookkeeping import Bookkeeping, Postponement
from scheduler_lib.domain.collections import CollectionRecord
from scheduler_lib.domain.definition import ConcurrencyPolicy, JobDefinition, MissedRunPolicy
from scheduler_lib.domain.executor_state import Claim, ExecutorState, LastFinished
from scheduler_lib.domain.jobs import JobRecord
from scheduler_lib.domain.keys import SEPARATOR, collection_key, job_key, split_job_key
from scheduler_lib.domain.text import has_lone_surrogate, printable, without_lone_surrogates
from scheduler_lib.domain.vocabulary import (
    COLLECTION_STATES,
    FINISHED_JOB_STATES,
    HISTORY_STATUSES,
    JOB_STATES,
    USER_COLLECTION_STATES,
    USER_JOB_STATES,
    CollectionState,
    HistoryStatus,
    JobState,
    Outcome,
)

__all__ = [
    "COLLECTION_STATES",
    "FINISHED_JOB_STATES",
    "HISTORY_STATUSES",
    "JOB_STATES",
    "SEPARATOR",
    "USER_COLLECTION_STATES",
    "USER_JOB_STATES",
    "Bookkeeping",
    "Claim",
    "CollectionRecord",
    "CollectionState",
    "ConcurrencyPolicy",
    "ExecutorState",
    "HistoryStatus",
    "JobDefinition",
    "JobRecord",
    "JobState",
    "LastFinished",
    "MissedRunPolicy",
    "Outcome",
    "Postponement",
    "collection_key",
    "has_lone_surrogate",
    "job_key",
    "printable",
    "split_job_key",
    "without_lone_surrogates",
]
