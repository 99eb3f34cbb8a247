"""History of deleted jobs, deleted in the background.

Deleting a job's history in the DELETE request took 70 s for 20,000 entries. Instead the
request records a purge of the job's history partition (`SchedulerState`, PartitionKey
`historyPurge`, RowKey = the history key) before it deletes the job, and returns; every
dispatcher tick deletes up to a bounded number of entries (`purge_histories`), and the daily
housekeeping finishes whatever is left. A request is removed once its partition is empty.

A job created again under the same name while the purge is pending is a new incarnation and
gets a history partition of its own (`JobRecord.history_partition`), so it never sees the
old entries and the purge never touches its new ones. A purge whose partition a live job
still uses (the DELETE lost a race and the job survived) is cancelled, not run.
"""

from __future__ import annotations

import logging

from azure.core.exceptions import ResourceNotFoundError
from azure.data.tables import UpdateMode

from scheduler_lib.domain import SEPARATOR
from scheduler_lib.store.history import delete_history, list_history
from scheduler_lib.store.jobs import find_job
from scheduler_lib.store.tables import TableStore

TABLE = "SchedulerState"
PARTITION = "historyPurge"
#: History entries a dispatcher tick deletes at most (10 table transactions).
TICK_BUDGET = 1000

log = logging.getLogger(__name__)


def request_history_purge(store: TableStore, history_key: str) -> None:
    """Record that the history partition `history_key` is to be deleted (idempotent)."""
    store.table(TABLE).upsert_entity(
        {"PartitionKey": PARTITION, "RowKey": history_key}, mode=UpdateMode.REPLACE
    )


def history_purge_pending(store: TableStore, history_key: str) -> bool:
    """Whether the history partition `history_key` is waiting to be deleted."""
    try:
        store.table(TABLE).get_entity(PARTITION, history_key, select=["RowKey"])
    except ResourceNotFoundError:
        return False
    return True


def pending_history_purges(store: TableStore) -> list[str]:
    """The history keys waiting to be deleted."""
    entities = store.table(TABLE).query_entities(
        "PartitionKey eq @pk", parameters={"pk": PARTITION}, select=["RowKey"]
    )
    return [entity["RowKey"] for entity in entities]


def purge_histories(store: TableStore, *, budget: int | None = None) -> int:
    """Delete the entries of requested purges, at most `budget` of them (None: all);
    returns how many it deleted."""
    deleted = 0
    for history_key in pending_history_purges(store):
        left = None if budget is None else budget - deleted
        if left is not None and left <= 0:
            break
        if _in_use(store, history_key):
            store.table(TABLE).delete_entity(PARTITION, history_key)
            continue
        removed = delete_history(store, history_key, limit=left)
        deleted += removed
        if left is None or removed < left or not _has_entries(store, history_key):
            store.table(TABLE).delete_entity(PARTITION, history_key)
            log.info("history of a deleted job purged", extra={"job": history_key})
    return deleted


def _in_use(store: TableStore, history_key: str) -> bool:
    """Whether a live job keeps its history in `history_key` (its own key or its own key
    plus incarnation)."""
    job = find_job(store, SEPARATOR.join(history_key.split(SEPARATOR)[:4]))
    return job is not None and job.history_key == history_key


def _has_entries(store: TableStore, history_key: str) -> bool:
    page, _ = list_history(store, history_key, page_size=1)
    return bool(page)
