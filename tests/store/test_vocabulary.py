"""States and statuses are enums defined once (domain/vocabulary.py): a member equals the
string the wire and the tables carry, the validators' tuples derive from the enums, and a
record holding a member is stored and read back as the plain string."""

from __future__ import annotations

from datetime import UTC, datetime

from scheduler_lib.domain import (
    FINISHED_JOB_STATES,
    HISTORY_STATUSES,
    JOB_STATES,
    USER_JOB_STATES,
    HistoryStatus,
    JobDefinition,
    JobRecord,
    JobState,
)
from scheduler_lib.store import HistoryEntry, add_history, list_history
from scheduler_lib.store.jobs import TABLE, get_job, put_job
from scheduler_lib.store.tables import TableStore

T0 = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)


def test_the_tuples_are_the_enums_values() -> None:
    assert JOB_STATES == ("Enabled", "Disabled", "Completed", "Faulted")
    assert USER_JOB_STATES == ("Enabled", "Disabled")
    assert FINISHED_JOB_STATES == ("Completed", "Faulted")
    assert HISTORY_STATUSES == ("Completed", "Failed", "Postponed", "Skipped")
    assert JobState.ENABLED == "Enabled" and HistoryStatus.POSTPONED == "Postponed"


def test_an_enum_member_is_stored_as_its_plain_string(store: TableStore) -> None:
    job = JobRecord(
        "sub", "rg", "coll", "Done-Job", JobDefinition({"action": {}}), T0, state=JobState.COMPLETED
    )
    put_job(store, job)
    entity = store.table(TABLE).get_entity(job.collection_key, "done-job")
    assert type(entity["State"]) is str and entity["State"] == "Completed"
    # Read back as the enum (a record's state is a JobState, issue 21).
    assert get_job(store, "sub", "rg", "coll", "Done-Job").state is JobState.COMPLETED

    entry = HistoryEntry(job.key, T0, T0, T0, "MainAction", HistoryStatus.FAILED, "boom")
    add_history(store, entry)
    [read] = list_history(store, job.key, status="Failed")[0]
    assert type(read.status) is str and read.status == "Failed"
