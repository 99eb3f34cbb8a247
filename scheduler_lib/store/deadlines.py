"""The dead-man switch's deadline index (`JobDeadlines`): when each watched job must have
succeeded by, so that the dispatcher's upkeep reads only the jobs whose deadline passed.

- PartitionKey `due`, RowKey `<deadline, ISO 8601 UTC>|<job key>`: one row per watched job;
  a range query `RowKey lt <now>` reads exactly the rows that are due, oldest first.
- PartitionKey `job`, RowKey `<job key>`: the job's current deadline row (`Due`), so
  re-arming replaces the old row; a row left behind by a crash between the two writes is
  recognised when it comes due (it is not the current one) and deleted.
- PartitionKey `overdue`, RowKey `<job key>`: the jobs the switch found Overdue (`Since`),
  so the dashboard's overview lists them first in O(overdue jobs) reads.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime

from azure.core.exceptions import ResourceNotFoundError

from scheduler_lib.store.tables import PAGE_LIMIT, TableStore, as_datetime, storage_errors

TABLE = "JobDeadlines"
DUE, JOB, OVERDUE = "due", "job", "overdue"


@dataclass(frozen=True)
class Deadline:
    """A due-partition row: the job it watches and when."""

    row_key: str
    job_key: str
    deadline: datetime


def _instant(value: datetime) -> str:
    """Whole seconds, one fixed width, so RowKeys sort as the instants do."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _row_key(job_key: str, deadline: datetime) -> str:
    return f"{_instant(deadline)}|{job_key}"


def current_deadline(store: TableStore, job_key: str) -> str | None:
    """The RowKey of the job's current deadline row (None: it is not watched)."""
    with storage_errors("The deadline index"), suppress(ResourceNotFoundError):
        entity = store.table(TABLE).get_entity(JOB, job_key)
        return str(entity["Due"])
    return None


def arm_deadline(store: TableStore, job_key: str, deadline: datetime) -> None:
    """Watch `job_key` until `deadline` (replacing any earlier deadline of it)."""
    table, row = store.table(TABLE), _row_key(job_key, deadline)
    previous = current_deadline(store, job_key)
    if previous == row:
        return
    with storage_errors("The deadline index"):
        table.upsert_entity({"PartitionKey": DUE, "RowKey": row, "Job": job_key})
        table.upsert_entity({"PartitionKey": JOB, "RowKey": job_key, "Due": row})
        if previous is not None:
            with suppress(ResourceNotFoundError):
                table.delete_entity(DUE, previous)


def disarm_deadline(store: TableStore, job_key: str) -> None:
    """Stop watching `job_key` (its setting is gone, or it no longer runs)."""
    previous = current_deadline(store, job_key)
    with storage_errors("The deadline index"):
        if previous is not None:
            with suppress(ResourceNotFoundError):
                store.table(TABLE).delete_entity(DUE, previous)
        with suppress(ResourceNotFoundError):
            store.table(TABLE).delete_entity(JOB, job_key)


def drop_deadline(store: TableStore, deadline: Deadline) -> None:
    """Delete one due row (one that is no longer the job's current one)."""
    with storage_errors("The deadline index"), suppress(ResourceNotFoundError):
        store.table(TABLE).delete_entity(DUE, deadline.row_key)


def due_deadlines(store: TableStore, *, now: datetime, limit: int) -> list[Deadline]:
    """Up to `limit` deadlines at or before `now`, oldest first: O(rows returned)."""
    query = "PartitionKey eq @pk and RowKey lt @upto"
    # '|' sorts after every character of an ISO instant, so a deadline of exactly `now`
    # is included.
    parameters = {"pk": DUE, "upto": _instant(now) + "|~"}
    found: list[Deadline] = []
    with storage_errors("The deadline index"):
        for entity in store.table(TABLE).query_entities(
            query, parameters=parameters, results_per_page=min(limit, PAGE_LIMIT)
        ):
            instant, _, job_key = str(entity["RowKey"]).partition("|")
            found.append(Deadline(entity["RowKey"], job_key, datetime.fromisoformat(instant)))
            if len(found) >= limit:
                break
    return found


def mark_overdue(store: TableStore, job_key: str, since: datetime | None) -> None:
    """List the job as Overdue since `since`, or (None) no longer."""
    table = store.table(TABLE)
    with storage_errors("The deadline index"):
        if since is None:
            with suppress(ResourceNotFoundError):
                table.delete_entity(OVERDUE, job_key)
        else:
            table.upsert_entity({"PartitionKey": OVERDUE, "RowKey": job_key, "Since": since})


def overdue_jobs(store: TableStore, *, limit: int = 100) -> list[tuple[str, datetime]]:
    """(job key, Overdue since) of up to `limit` Overdue jobs."""
    found: list[tuple[str, datetime]] = []
    with storage_errors("The deadline index"):
        for entity in store.table(TABLE).query_entities(
            "PartitionKey eq @pk", parameters={"pk": OVERDUE}, results_per_page=limit
        ):
            found.append((entity["RowKey"], as_datetime(entity["Since"]) or datetime.min))
            if len(found) >= limit:
                break
    return found
