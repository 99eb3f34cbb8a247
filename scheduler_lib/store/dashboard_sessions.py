"""The dashboard's open sessions, in the `SchedulerState` table: what makes signing out final.

The session cookie proves which key signed a session in, and when (it is signed, and
expires after 8 hours); the row says the session is still open. Signing out deletes the
row, so a copy of the cookie taken before is refused afterwards, by every instance of the
app: they share the table, and no instance keeps sessions in its memory. Removing a key from
`SCHEDULER_API_KEYS` (the documented rotation) ends its sessions without touching the
table: no cookie it signed verifies any more.

One entity per open session: PartitionKey `dashboard-session`, RowKey the SHA-256 of the
session id (the table never holds what a cookie holds), `ExpiresAt`. A session that is not
signed out but simply expires leaves its row behind; each sign-in deletes up to
`PURGE_BATCH` such rows, so the partition holds little more than the last 8 hours' sessions.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from itertools import islice

from azure.core.exceptions import ResourceNotFoundError

from scheduler_lib.store.tables import TableStore, as_datetime, write_entity

TABLE = "SchedulerState"
PARTITION = "dashboard-session"
PURGE_BATCH = 20


def _row(session_id: str) -> str:
    return hashlib.sha256(session_id.encode()).hexdigest()


def open_dashboard_session(
    store: TableStore, session_id: str, *, expires_at: datetime, now: datetime
) -> None:
    """Record a new session (a fresh random id: ResourceExistsError if it were not), and
    delete a few sessions that expired without being signed out."""
    entity = {"PartitionKey": PARTITION, "RowKey": _row(session_id), "ExpiresAt": expires_at}
    write_entity(store.table(TABLE), entity, etag=None, create_only=True)
    _purge_expired(store, now)


def dashboard_session_is_open(store: TableStore, session_id: str, *, now: datetime) -> bool:
    """Whether the session was opened and neither signed out nor expired."""
    try:
        entity = store.table(TABLE).get_entity(PARTITION, _row(session_id))
    except ResourceNotFoundError:
        return False
    expires_at = as_datetime(entity.get("ExpiresAt"))
    return expires_at is not None and now < expires_at


def close_dashboard_session(store: TableStore, session_id: str) -> None:
    """End the session (nothing to do if it already ended: signing out twice is fine)."""
    store.table(TABLE).delete_entity(PARTITION, _row(session_id))


def _purge_expired(store: TableStore, now: datetime) -> None:
    table = store.table(TABLE)
    expired = table.query_entities(
        "PartitionKey eq @pk and ExpiresAt le @now",
        parameters={"pk": PARTITION, "now": now},
        select=["PartitionKey", "RowKey"],
        results_per_page=PURGE_BATCH,
    )
    for entity in islice(expired, PURGE_BATCH):
        table.delete_entity(PARTITION, entity["RowKey"])
