"""Azure Scheduler's words for states and outcomes, each defined once.

`StrEnum`s, so a member compares equal to the string the wire and the tables carry
(`JobState.ENABLED == "Enabled"`), and the tuples the validators and filters list are derived
from them rather than spelled out again.
"""

from __future__ import annotations

from enum import StrEnum


class JobState(StrEnum):
    ENABLED = "Enabled"
    DISABLED = "Disabled"
    COMPLETED = "Completed"  # no occurrence left (count, endTime, one-off done)
    FAULTED = "Faulted"  # the executor gave up (errorAction exhausted, poisoned, ...)


class CollectionState(StrEnum):
    ENABLED = "Enabled"
    DISABLED = "Disabled"
    SUSPENDED = "Suspended"
    DELETED = "Deleted"


class HistoryStatus(StrEnum):
    COMPLETED = "Completed"
    FAILED = "Failed"
    POSTPONED = "Postponed"  # written by the dispatcher when a quota postpones an occurrence
    #: 2026-12-01's overlap policy: an occurrence not run because the previous one still
    #: ran (2016-03-01 answers show it too: the SDK keeps an unknown status as its string).
    SKIPPED = "Skipped"


class Outcome(StrEnum):
    """How one occurrence ended, as the metrics (`scheduler_lib/metrics`) name it: the
    history's and the job state's words, plus the two ways an occurrence ends that the
    history writes as another status (a Postponed entry for downtime; a Failed entry for a
    poisoned message). Per attempt, the history status itself (Completed, Failed) is used."""

    COMPLETED = HistoryStatus.COMPLETED.value  # its main action succeeded (a retry included)
    FAULTED = JobState.FAULTED.value  # the main action failed on its last allowed attempt
    SKIPPED = HistoryStatus.SKIPPED.value  # the overlap policy: the previous one still ran
    POSTPONED = HistoryStatus.POSTPONED.value  # the executor: it would start past the grace period
    MISSED = "Missed"  # the dispatcher: missed by downtime (one Postponed entry, maybe several)
    POISONED = "Poisoned"  # its message failed as often as the host allows


#: Every job state, as the wire spells it (validation, `$filter=state eq ...`).
JOB_STATES: tuple[str, ...] = tuple(state.value for state in JobState)
#: The job states a user may set; the others are the scheduler's verdicts.
USER_JOB_STATES: tuple[str, ...] = (JobState.ENABLED.value, JobState.DISABLED.value)
#: The job states in which nothing more will run (housekeeping deletes them in time).
FINISHED_JOB_STATES: tuple[str, ...] = (JobState.COMPLETED.value, JobState.FAULTED.value)
COLLECTION_STATES: tuple[str, ...] = tuple(state.value for state in CollectionState)
#: The collection states a request may set. Suspended is the platform's (Azure put a
#: collection in it when its subscription was suspended), but Azure Scheduler accepted it
#: in a PUT or PATCH too; only Deleted is never requested.
USER_COLLECTION_STATES: tuple[str, ...] = (
    CollectionState.ENABLED.value,
    CollectionState.DISABLED.value,
    CollectionState.SUSPENDED.value,
)
HISTORY_STATUSES: tuple[str, ...] = tuple(status.value for status in HistoryStatus)
