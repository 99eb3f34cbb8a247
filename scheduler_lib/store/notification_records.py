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

from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, TypedDict

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


class DeliveryStatus(StrEnum):
    DELIVERED = "Delivered"
    FAILED = "Failed"  # sent again with the notice's next round
    GAVE_UP = "GaveUp"  # failed in the last round


class _DeliveryJSON(TypedDict):
    """A delivery as `Deliveries` stores it (the keys the dashboard has always read)."""

    key: str
    target: str
    format: str
    status: str
    attempts: int
    statusCode: int | None
    message: str
    at: str


@dataclass(frozen=True)
class NoticeDelivery:
    """One subscription's delivery of a notice, as the record keeps it (and the dashboard
    shows it): where to (`target`: the destination's origin, never a secret nor the URL's
    path), how it went, how often. The stored JSON is read and written here only."""

    key: str  # the subscription's (`notify.subscriptions.key`)
    target: str
    format: str
    status: DeliveryStatus
    attempts: int
    status_code: int | None  # the last answer's, None when none came
    message: str  # why the last attempt failed ("" when delivered)
    at: str  # the last attempt's instant, ISO 8601

    @property
    def settled(self) -> bool:
        """Nothing more to send: delivered, or given up."""
        return self.status in (DeliveryStatus.DELIVERED, DeliveryStatus.GAVE_UP)

    def to_json(self) -> _DeliveryJSON:
        return {
            "key": self.key,
            "target": self.target,
            "format": self.format,
            "status": self.status.value,
            "attempts": self.attempts,
            "statusCode": self.status_code,
            "message": self.message,
            "at": self.at,
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> NoticeDelivery:
        code = value.get("statusCode")
        return cls(
            key=str(value.get("key", "")),
            target=str(value.get("target", "")),
            format=str(value.get("format", "")),
            status=DeliveryStatus(value.get("status", DeliveryStatus.FAILED.value)),
            attempts=int(value.get("attempts", 0)),
            status_code=code if isinstance(code, int) else None,
            message=str(value.get("message", "")),
            at=str(value.get("at", "")),
        )


@dataclass(frozen=True)
class NoticeRecord:
    """One notice of a job and its deliveries (one per subscription)."""

    job_key: str
    notice_id: str
    event: str
    time: datetime
    summary: str
    deliveries: tuple[NoticeDelivery, ...] = ()
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
        "Deliveries": dumps([delivery.to_json() for delivery in record.deliveries]),
    }


def _record(entity: Any) -> NoticeRecord:
    return NoticeRecord(
        job_key=entity["PartitionKey"],
        notice_id=entity["NoticeId"],
        event=entity["Event"],
        time=as_datetime(entity["Time"]) or datetime.min,
        summary=entity.get("Summary", ""),
        deliveries=tuple(
            NoticeDelivery.from_json(d) for d in loads(entity.get("Deliveries") or "[]")
        ),
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
