"""Jobs in Table storage.

`Jobs`: PartitionKey = collection key (`sub|rg|collection`), RowKey = job name, both
lower-cased. The entity holds the job definition as JSON (secrets included: they are
write-only at the API, not absent from storage), the state, the status counters as real
columns (so they can be filtered and read cheaply), the creation instant (the reference
instant of a schedule without startTime) and a small JSON bag of dispatcher/executor
bookkeeping.

Every write that follows a read passes the ETag it read, so two writers (the API, the
dispatcher, the executor) can never silently overwrite each other.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from azure.core.exceptions import ResourceNotFoundError

from scheduler_lib.store.partition_counter import (
    COUNTED_ROWS,
    COUNTER_ROW,
    create_counted,
    delete_counted,
)
from scheduler_lib.store.tables import (
    SEPARATOR,
    TableStore,
    as_datetime,
    collection_key,
    dumps,
    job_key,
    query_page,
    storage_errors,
    write_entity,
)

TABLE = "Jobs"
JOB_STATES = ("Enabled", "Disabled", "Completed", "Faulted")

#: Bookkeeping key: the occurrences the dispatcher sent lately (ISO 8601, ascending). It sends
#: up to a minute ahead and then advances `next_execution_time` past them, so an every-minute
#: job can have two in flight; until an occurrence's second it, not `next_execution_time`, is
#: the job's next execution. (Older entities hold one string: the latest sent.)
#: Bookkeeping: how many occurrences the dispatcher has sent (numbered 1, 2, ...).
OCCURRENCES = "occurrences"
#: Bookkeeping: how many of those the executor did not run because they would have started
#: later than the grace period (postponed). Like the dispatcher's own postponements, they do
#: not count toward `recurrence.count`, which counts executions.
NOT_RUN = "notRun"
DISPATCHED = "dispatched"
#: How long a sent occurrence is remembered after a later one is sent: far more than the
#: dispatcher's look-ahead (a tick sends at most through the end of the minute after the
#: next), so every occurrence dropped from the list has started by then.
_SENT_MEMORY = timedelta(minutes=5)


def counted_occurrences(bookkeeping: dict[str, Any]) -> int:
    """Occurrences that count toward `recurrence.count`: sent, less those postponed unrun."""
    return int(bookkeeping.get(OCCURRENCES, 0) or 0) - int(bookkeeping.get(NOT_RUN, 0) or 0)


def sent_occurrences(bookkeeping: dict[str, Any]) -> list[datetime]:
    """The occurrences recorded as sent (either stored form), ascending."""
    sent = bookkeeping.get(DISPATCHED)
    values = [sent] if isinstance(sent, str) else sent if isinstance(sent, list) else []
    return sorted(datetime.fromisoformat(v) for v in values if isinstance(v, str))


def with_sent(bookkeeping: dict[str, Any], due: datetime) -> list[str]:
    """The DISPATCHED list once `due` is sent too: those older than `_SENT_MEMORY` before it
    are forgotten (they have started), so the list stays a handful of entries."""
    kept = {t for t in sent_occurrences(bookkeeping) if t >= due - _SENT_MEMORY} | {due}
    return [_iso(t) for t in sorted(kept)]


@dataclass(frozen=True)
class JobRecord:
    """A job as stored. `definition` is the job properties JSON minus state and status."""

    subscription_id: str
    resource_group: str
    collection_name: str
    name: str
    definition: dict[str, Any]
    created_time: datetime
    state: str = "Enabled"
    execution_count: int = 0
    failure_count: int = 0
    faulted_count: int = 0
    last_execution_time: datetime | None = None
    next_execution_time: datetime | None = None
    bookkeeping: dict[str, Any] = field(default_factory=dict)
    etag: str | None = None
    #: Which life of the name this is: a job deleted and created again under the same name is
    #: a new incarnation, so what belongs to the old one (its due-index row, its history being
    #: deleted in the background) can never be mistaken for the new one's. Empty for jobs
    #: stored before incarnations existed.
    incarnation: str = ""
    #: The history partition, when it is not the job key: a job created while the history of
    #: a deleted job of the same name was still being purged gets its own (`history_purge`).
    history_partition: str = ""

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

    def own_history_key(self) -> str:
        """A history partition of this incarnation alone (see `history_partition`)."""
        return f"{self.key}{SEPARATOR}{self.incarnation}"

    def upcoming_execution(self, now: datetime) -> datetime | None:
        """The job's next execution as of `now`: the earliest occurrence that has not
        started — one already sent to the executor and not yet due, else
        `next_execution_time`. A job that is not Enabled will not run what was sent (the
        executor drops it)."""
        if self.state == "Enabled":
            pending = [t for t in sent_occurrences(self.bookkeeping) if t > now]
            if pending:
                return pending[0]
        return self.next_execution_time

    def status(self, now: datetime) -> dict[str, Any]:
        """The `status` object of the wire format as of `now` (times as ISO 8601 UTC)."""
        status: dict[str, Any] = {
            "executionCount": self.execution_count,
            "failureCount": self.failure_count,
            "faultedCount": self.faulted_count,
        }
        if self.last_execution_time is not None:
            status["lastExecutionTime"] = _iso(self.last_execution_time)
        upcoming = self.upcoming_execution(now)
        if upcoming is not None:
            status["nextExecutionTime"] = _iso(upcoming)
        return status


def _iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


def _to_entity(record: JobRecord) -> dict[str, Any]:
    entity: dict[str, Any] = {
        "PartitionKey": record.collection_key,
        "RowKey": record.name.lower(),
        "SubscriptionId": record.subscription_id,
        "ResourceGroup": record.resource_group,
        "CollectionName": record.collection_name,
        "Name": record.name,
        "Definition": dumps(record.definition),
        "CreatedTime": record.created_time,
        "State": record.state,
        "ExecutionCount": record.execution_count,
        "FailureCount": record.failure_count,
        "FaultedCount": record.faulted_count,
        "Bookkeeping": dumps(record.bookkeeping),
    }
    if record.incarnation:
        entity["Incarnation"] = record.incarnation
    if record.history_partition:
        entity["HistoryKey"] = record.history_partition
    # Table storage has no null: an absent property is how "no value" is stored.
    if record.last_execution_time is not None:
        entity["LastExecutionTime"] = record.last_execution_time
    if record.next_execution_time is not None:
        entity["NextExecutionTime"] = record.next_execution_time
    return entity


def _from_entity(entity: Any) -> JobRecord:
    return JobRecord(
        subscription_id=entity["SubscriptionId"],
        resource_group=entity["ResourceGroup"],
        collection_name=entity["CollectionName"],
        name=entity["Name"],
        definition=json.loads(entity["Definition"]),
        created_time=as_datetime(entity["CreatedTime"]),  # type: ignore[arg-type]
        state=entity.get("State", "Enabled"),
        execution_count=int(entity.get("ExecutionCount", 0)),
        failure_count=int(entity.get("FailureCount", 0)),
        faulted_count=int(entity.get("FaultedCount", 0)),
        last_execution_time=as_datetime(entity.get("LastExecutionTime")),
        next_execution_time=as_datetime(entity.get("NextExecutionTime")),
        bookkeeping=json.loads(entity.get("Bookkeeping") or "{}"),
        etag=entity.metadata.get("etag"),
        incarnation=entity.get("Incarnation", ""),
        history_partition=entity.get("HistoryKey", ""),
    )


def get_job(
    store: TableStore, subscription_id: str, resource_group: str, collection: str, name: str
) -> JobRecord:
    """The job, or NotFoundError."""
    with storage_errors(f"Job '{name}'"):
        entity = store.table(TABLE).get_entity(
            collection_key(subscription_id, resource_group, collection), name.lower()
        )
    return _from_entity(entity)


def find_job(store: TableStore, key: str) -> JobRecord | None:
    """The job with this `JobRecord.key`, or None (a due-index row may outlive its job).

    A point read, not a query: the executor calls it for every message, and a query costs
    the emulator a scan of the table (2.5x the CPU of a point read at 20,000 jobs)."""
    partition, _, row = key.rpartition("|")
    try:
        entity = store.table(TABLE).get_entity(partition, row)
    except ResourceNotFoundError:
        return None
    return _from_entity(entity)


def list_jobs(
    store: TableStore,
    subscription_id: str,
    resource_group: str,
    collection: str,
    *,
    state: str | None = None,
    page_size: int = 100,
    continuation: str | None = None,
) -> tuple[list[JobRecord], str | None]:
    """One page of a collection's jobs in name order, and the opaque token of the next page."""
    entities, token = query_page(
        store.table(TABLE),
        collection_key(subscription_id, resource_group, collection),
        equals=("State", state) if state is not None else None,
        page_size=page_size,
        continuation=continuation,
    )
    # The job count entity sorts after every job: only a last page can hold it.
    return [_from_entity(e) for e in entities if e["RowKey"] != COUNTER_ROW], token


def iter_jobs(store: TableStore) -> Iterator[JobRecord]:
    """Every job in the account, partition by partition. A full scan: only for daily
    housekeeping, never for the per-minute dispatcher."""
    for entity in store.table(TABLE).list_entities():
        if entity["RowKey"] != COUNTER_ROW:
            yield _from_entity(entity)


def enabled_jobs(store: TableStore, *, due_before: datetime | None = None) -> Iterator[JobRecord]:
    """Every Enabled job (with `due_before`: only those whose next execution lies before it),
    across collections. A filtered scan of the table: only for the periodic consistency check
    (`anti_entropy`) and the daily housekeeping, never per job."""
    query = "State eq 'Enabled'"
    parameters: dict[str, Any] = {}
    if due_before is not None:
        query += " and NextExecutionTime lt @before"
        parameters["before"] = due_before
    for entity in store.table(TABLE).query_entities(query, parameters=parameters):
        yield _from_entity(entity)


def count_jobs(store: TableStore, collection_key_: str) -> int:
    """How many jobs a collection holds (for the `maxJobCount` quota); reads keys only."""
    entities = store.table(TABLE).query_entities(
        f"PartitionKey eq @pk and {COUNTED_ROWS}",
        parameters={"pk": collection_key_},
        select=["RowKey"],
    )
    return sum(1 for _ in entities)


def put_job(
    store: TableStore,
    record: JobRecord,
    *,
    etag: str | None = None,
    create_only: bool = False,
    check_count: Callable[[int], None] | None = None,
) -> JobRecord:
    """Create or replace a job and return it with its new ETag.

    `create_only` fails with ConflictError when the job already exists, and counts the job
    in its collection atomically (`partition_counter`), calling `check_count(jobs already there)`
    first (the quota check, which raises); `etag` makes the replace conditional
    (PreconditionFailedError when someone changed it meanwhile).
    """
    table = store.table(TABLE)
    with storage_errors(f"Job '{record.name}'"):
        if create_only:
            meta, _ = create_counted(table, _to_entity(record), check_count)
        else:
            meta = write_entity(table, _to_entity(record), etag=etag, create_only=False)
    return replace(record, etag=meta.get("etag"))


def delete_job(store: TableStore, record: JobRecord, *, etag: str | None = None) -> None:
    """Delete the job entity and uncount it (its due-index row, if any, is dropped by the
    dispatcher)."""
    with storage_errors(f"Job '{record.name}'"):
        delete_counted(store.table(TABLE), record.collection_key, record.name.lower(), etag)
