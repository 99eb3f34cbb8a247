"""A read only the dashboard's overview makes: recent history across all jobs.

It is a scan, bounded: it filters server-side on `StartTime` (Table storage indexes only the
keys, so the service reads the table, but returns only the matching rows) and stops after
`limit` rows, so the page says "at least N" rather than reading without bound. They are for
a person looking at a page, never for the per-minute dispatcher.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import datetime

from scheduler_lib.store.history import TABLE as HISTORY
from scheduler_lib.store.partition_counter import COUNTED_ROWS
from scheduler_lib.store.tables import PAGE_LIMIT, TableStore, stored_datetime


@dataclass(frozen=True)
class RecentEntry:
    """A history row, as much of it as the overview needs."""

    history_key: str  # the job's history partition
    start_time: datetime
    status: str
    action_name: str
    retry_count: int
    repeat_count: int  # the occurrence number; 0 for a manual run
    expected_time: datetime  # the scheduled second (lateness: start_time minus this)


def recent_history(
    store: TableStore, *, since: datetime, limit: int, statuses: tuple[str, ...] = ()
) -> list[RecentEntry]:
    """History rows of every job that started at or after `since` (with `statuses`: only
    those), at most `limit` of them."""
    query = f"StartTime ge @since and {COUNTED_ROWS}"
    parameters: dict[str, datetime | str] = {"since": since}
    if statuses:
        names = [f"s{i}" for i in range(len(statuses))]
        query += " and (" + " or ".join(f"Status eq @{n}" for n in names) + ")"
        parameters.update(zip(names, statuses, strict=True))
    entities = store.table(HISTORY).query_entities(
        query,
        parameters=parameters,
        select=[
            "PartitionKey",
            "StartTime",
            "Status",
            "ActionName",
            "RetryCount",
            "RepeatCount",
            "ExpectedExecutionTime",
        ],
        results_per_page=PAGE_LIMIT,
    )
    return [
        RecentEntry(
            history_key=e["PartitionKey"],
            start_time=stored_datetime(e["StartTime"]),
            status=e["Status"],
            action_name=e["ActionName"],
            retry_count=int(e.get("RetryCount", 0)),
            repeat_count=int(e.get("RepeatCount", 0)),
            expected_time=stored_datetime(e["ExpectedExecutionTime"]),
        )
        for e in itertools.islice(entities, limit)
    ]
