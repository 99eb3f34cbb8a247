"""The scheduler's domain: jobs, job collections, their identities and their vocabulary.

Knows no storage, queue or HTTP. `store/` reads and writes these records, `model/` turns them
into wire JSON, `dispatch/` and `execution/` change them; all of them import `domain`, and
`domain` imports none of them.

`keys` (the identities every table shares), `jobs` (`JobRecord` and the dispatcher's record of
what it sent), `collections` (`CollectionRecord`), `vocabulary` (states and statuses as enums).
"""

from scheduler_lib.domain.collections import CollectionRecord
from scheduler_lib.domain.jobs import (
    CLAIMS,
    DISPATCHED,
    ENDED_AT,
    EXECUTOR,
    NOT_RUN,
    OCCURRENCES,
    POSTPONED,
    JobRecord,
    counted_occurrences,
    sent_occurrences,
    with_sent,
)
from scheduler_lib.domain.keys import SEPARATOR, collection_key, split_job_key
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
)

__all__ = [
    "CLAIMS",
    "COLLECTION_STATES",
    "DISPATCHED",
    "ENDED_AT",
    "EXECUTOR",
    "FINISHED_JOB_STATES",
    "HISTORY_STATUSES",
    "JOB_STATES",
    "NOT_RUN",
    "OCCURRENCES",
    "POSTPONED",
    "SEPARATOR",
    "USER_COLLECTION_STATES",
    "USER_JOB_STATES",
    "CollectionRecord",
    "CollectionState",
    "HistoryStatus",
    "JobRecord",
    "JobState",
    "(",
    "collection_key",
    "counted_occurrences",
    "sent_occurrences",
    "split_job_key",
    "with_sent",
]
