"""The record of notifications (`NotificationDeliveries`): what was sent for a job, where,
and how it went; also each job's quiet periods (at most one `Postponed` per window).

- PartitionKey: the job key. RowKey `<inverted milliseconds of the event>-<notice id>`:
  a job's notices newest first, and one row per notice, so a notice handled twice (a queue
  message delivered again, a retry) finds its row and sends only what is still pending.
  `Deliveries`: JSON list, one entry per subscription (its destination's origin and the
  format, never a secret nor the URL's path: a Slack or Teams webhook's path is its key),
  with its status, attempts, the last answer.
- RowKey `~quiet-<event>` (sorts after every notice): when the job last notified `<event>`,
  ETag-guarded so two workers cannot both take the same window.

Kept `RETENTION` (as the history); the daily housekeeping deletes older rows.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from azure.core.exceptions import (
    ResourceExistsError,
    ResourceModifiedError,
    ResourceNotFoundError,
)

from scheduler_lib.store.entity import Entity
from scheduler_lib.store.tables import (
    TableStore,
    as_datetime,
    dumps,
    loads,
    storage_errors,
    write_entity,
)

TABLE = "NotificationDeliveries"
RETENTION = timedelta(days=60)
_QUIET = "~quiet-"
_MAX_MS = 10**14  # beyond year 5000 in milliseconds since the epoch


@dataclass(frozen=True)
class NoticeRecord:
    """One notice of a job and its deliveries (one per subscription)."""

    job_key: str
    notice_id: str
    event: str
    time: datetime
    summary: str
    deliveries: tuple[dict[str, Any], ...] = ()
    etag: str | None = field(default=None, compare=False)

    @property
    def row_key(self) -> str:
        inverted = _MAX_MS - int(self.time.timestamp() * 1000)
        return f"{inverted:015d}-{self.notice_id}"


def _entity(record: NoticeRecord) -> Entity:
    return {
        "PartitionKey": record.job_key,
        "RowKey": record.row_key,
        "NoticeId": record.notice_id,
        "Event": record.event,
        "Time": record.time,
        "Summary": record.summary[:1024],
        "Deliveries": dumps(list(record.deliveries)),
    }


def _record(entity: Any) -> NoticeRecord:
    return NoticeRecord(
        job_key=entity["PartitionKey"],
        notice_id=entity["NoticeId"],
        event=entity["Event"],
        time=as_datetime(entity["Time"]) or datetime.min,
        summary=entity.get("Summary", ""),
        deliveries=tuple(loads(entity.get("Deliveries") or "[]")),
        etag=entity.metadata.get("etag"),
    )


def open_notice(store: TableStore, record: NoticeRecord) -> NoticeRecord:
    """The stored record of this notice: created now, or the one an earlier handling made."""
    table = store.table(TABLE)
    with storage_errors("The notification record"):
        try:
            meta = write_entity(table, _entity(record), etag=None, create_only=True)
            return replace(record, etag=meta.get("etag"))
        except ResourceExistsError:
            return _record(table.get_entity(record.job_key, record.row_key))


def save_notice(store: TableStore, record: NoticeRecord) -> NoticeRecord | None:
    """Write the record if nobody changed it since it was read (None: someone did)."""
    with storage_errors("The notification record"):
        try:
            meta = write_entity(
                store.table(TABLE), _entity(record), etag=record.etag, create_only=False
            )
        except (ResourceModifiedError, ResourceNotFoundError):
            return None
    return replace(record, etag=meta.get("etag"))


def list_notices(store: TableStore, job_key: str, *, limit: int = 50) -> list[NoticeRecord]:
    """A job's newest notices (the dashboard's job page)."""
    query = "PartitionKey eq @pk and RowKey lt @quiet"
    found: list[NoticeRecord] = []
    with storage_errors("The notification record"):
        for entity in store.table(TABLE).query_entities(
            query, parameters={"pk": job_key, "quiet": _QUIET}, results_per_page=limit
        ):
            found.append(_record(entity))
            if len(found) >= limit:
                break
    return found


def take_quiet_window(
    store: TableStore, job_key: str, event: str, *, owner: str, now: datetime, window: timedelta
) -> bool:
    """True when notice `owner` may notify `event`: the job has not notified it within
    `window` before `now` (the window is then `owner`'s), or `owner` already holds it (a
    notice handled again); False when another notice holds it."""
    table = store.table(TABLE)
    row = {"PartitionKey": job_key, "RowKey": _QUIET + event, "Time": now, "Owner": owner}
    with storage_errors("The notification record"):
        try:
            entity = table.get_entity(job_key, _QUIET + event)
        except ResourceNotFoundError:
            try:
                table.create_entity(row)
            except ResourceExistsError:
                return False
            return True
        if entity.get("Owner") == owner:
            return True
        last = as_datetime(entity.get("Time"))
        if last is not None and now - last < window:
            return False
        try:
            write_entity(table, row, etag=entity.metadata["etag"], create_only=False)
        except (ResourceModifiedError, ResourceNotFoundError):
            return False
    return True


def purge_notices(store: TableStore, *, now: datetime, budget: int = 5000) -> int:
    """Delete up to `budget` rows older than `RETENTION` (the daily housekeeping)."""
    table, deleted = store.table(TABLE), 0
    cutoff = now - RETENTION
    with storage_errors("The notification record"):
        rows = table.query_entities(
            "Time lt @cutoff", parameters={"cutoff": cutoff}, select=["PartitionKey", "RowKey"]
        )
        for entity in rows:
            with suppress(ResourceNotFoundError):
                table.delete_entity(entity["PartitionKey"], entity["RowKey"])
            deleted += 1
            if deleted >= budget:
                break
    return deleted
