"""Job history in Table storage: one entity per attempt of an action.

`JobHistory`: PartitionKey = the job's `history_key` (job key and incarnation), RowKey =
inverted start time plus a random suffix, so a partition reads newest first (what the
history API returns) and two attempts that start in the same microsecond never collide.

At most `HISTORY_KEEP` entries per job, enforced as they are written (`history_cap`), not
only by the daily housekeeping: an every-minute job with retries stored 20,000 in two weeks.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from azure.core.exceptions import ResourceNotFoundError

from scheduler_lib.domain import HistoryStatus
from scheduler_lib.domain.history_counter import HistoryCounter
from scheduler_lib.domain.json_values import JSONObject
from scheduler_lib.store.history_cap import delete_rows, insert_known
from scheduler_lib.store.partition_counter import COUNTED_ROWS, COUNTER_ROW, counted_page, uncount
from scheduler_lib.store.tables import TableStore, as_datetime, stored_datetime, stored_text
from scheduler_lib.timeutil import iso_z

TABLE = "JobHistory"
_MAX_MICROS = 10**17  # far beyond year 9999 in microseconds since the epoch
#: Entries kept per job (Azure Scheduler's documented limit).
HISTORY_KEEP = 1000
#: The status of a history entry the dispatcher writes when a quota postpones an occurrence.
POSTPONED_STATUS = HistoryStatus.POSTPONED.value


@dataclass(frozen=True)
class HistoryEntry:
    """One attempt (or one postponement) as the history API reports it."""

    job_key: str
    start_time: datetime
    end_time: datetime
    expected_execution_time: datetime
    action_name: str  # MainAction | ErrorAction
    status: str  # Completed | Failed | Postponed
    message: str
    retry_count: int = 0
    repeat_count: int = 0  # the occurrence number
    history_id: str | None = None

    def to_properties(self) -> JSONObject:
        """The `properties` of a JobHistoryDefinition on the wire."""
        return {
            "startTime": iso_z(self.start_time),
            "endTime": iso_z(self.end_time),
            "expectedExecutionTime": iso_z(self.expected_execution_time),
            "actionName": self.action_name,
            "status": self.status,
            "message": self.message,
            "retryCount": self.retry_count,
            "repeatCount": self.repeat_count,
        }


def _row_key(start: datetime) -> str:
    micros = int(start.timestamp() * 1_000_000)
    return f"{_MAX_MICROS - micros:017d}-{uuid.uuid4().hex[:8]}"


def _from_entity(entity: Any) -> HistoryEntry:
    return HistoryEntry(
        job_key=entity["PartitionKey"],
        start_time=stored_datetime(entity["StartTime"]),
        end_time=stored_datetime(entity["EndTime"]),
        expected_execution_time=stored_datetime(entity["ExpectedExecutionTime"]),
        action_name=entity["ActionName"],
        status=entity["Status"],
        message=stored_text(entity.get("Message", "")),
        retry_count=int(entity.get("RetryCount", 0)),
        repeat_count=int(entity.get("RepeatCount", 0)),
        history_id=entity["RowKey"],
    )


def add_history(
    store: TableStore, entry: HistoryEntry, *, keep: int = HISTORY_KEEP
) -> HistoryEntry:
    """Append an entry and return it with its id; the job's oldest entry goes when that
    would make more than `keep` (`history_cap`)."""
    return add_counted_history(store, entry, known=None, keep=keep)[0]


def add_counted_history(
    store: TableStore,
    entry: HistoryEntry,
    *,
    known: HistoryCounter | None,
    keep: int = HISTORY_KEEP,
) -> tuple[HistoryEntry, HistoryCounter | None]:
    """`add_history` with the job's history counter as `known` (the executor's snapshot:
    written without reading the counter while it is still so), and the counter as written
    (None: not known), for the next snapshot."""
    row = _row_key(entry.start_time)
    entity = {
        "PartitionKey": entry.job_key,
        "RowKey": row,
        "StartTime": entry.start_time,
        "EndTime": entry.end_time,
        "ExpectedExecutionTime": entry.expected_execution_time,
        "ActionName": entry.action_name,
        "Status": str(entry.status),  # a HistoryStatus is stored as its plain value
        "Message": entry.message,
        "RetryCount": entry.retry_count,
        "RepeatCount": entry.repeat_count,
    }
    counter = insert_known(store.table(TABLE), entity, keep=keep, known=known)
    return replace(entry, history_id=row), counter


def list_history(
    store: TableStore,
    job_key: str,
    *,
    status: str | None = None,
    page_size: int = 100,
    continuation: str | None = None,
) -> tuple[list[HistoryEntry], str | None]:
    """One page of a job's history, newest first, and the token of the next page."""
    entities, token = counted_page(
        store.table(TABLE),
        job_key,
        column="Status",
        value=status,
        page_size=page_size,
        continuation=continuation,
    )
    return [_from_entity(e) for e in entities], token


def _keys(store: TableStore, job_key: str) -> Iterator[tuple[str, datetime | None]]:
    """The entries' ids and start times, newest first (not the count entity)."""
    entities = store.table(TABLE).query_entities(
        f"PartitionKey eq @pk and {COUNTED_ROWS}",
        parameters={"pk": job_key},
        select=["RowKey", "StartTime"],
    )
    for entity in entities:
        yield entity["RowKey"], as_datetime(entity.get("StartTime"))


def _delete_rows(store: TableStore, job_key: str, rows: list[str]) -> int:
    return delete_rows(store.table(TABLE), job_key, rows)


def delete_history(store: TableStore, job_key: str, *, limit: int | None = None) -> int:
    """Delete the entries of a job (all, or `limit` of them: a bounded step of a background
    purge, which reads no more keys than it deletes) and, once none is left, its count;
    returns how many entries."""
    keys = _keys(store, job_key)
    rows = [row for row, _ in (keys if limit is None else itertools.islice(keys, limit + 1))]
    everything = limit is None or len(rows) <= limit
    removed = _delete_rows(store, job_key, rows[:limit])
    if everything:
        with suppress(ResourceNotFoundError):
            store.table(TABLE).delete_entity(job_key, COUNTER_ROW)
    else:
        uncount(store.table(TABLE), job_key, removed)
    return removed


def prune_history(store: TableStore, job_key: str, *, keep: int, older_than: datetime) -> int:
    """Keep at most the newest `keep` entries and none that started before `older_than`."""
    doomed = [
        row
        for index, (row, start) in enumerate(_keys(store, job_key))
        if index >= keep or (start is not None and start < older_than)
    ]
    removed = _delete_rows(store, job_key, doomed)
    uncount(store.table(TABLE), job_key, removed)
    return removed
