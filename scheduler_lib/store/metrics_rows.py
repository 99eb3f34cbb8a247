"""The metrics' rows in the `SchedulerState` table, PartitionKey `metrics`.

- `i-<instance>`: one per running instance, its counters as of its last flush (a snapshot,
  JSON text the metrics package writes and reads; this module does not look inside), and
  `FlushedAt`. Only that instance writes it, ETag-conditionally: a write that finds the row
  gone learns that it was folded (below).
- `retired`: the counters of instances that stopped flushing, added up (`fold_row`), and
  `Folded`, the newest row keys folded into it, so a fold repeated after a crash adds
  nothing twice and a scrape never counts a row both ways.
- `labels`: which collections and jobs have a label value of their own
  (`register_label`): first come, for good, up to the settings' limits.

A scrape reads the whole partition in one query: O(instances) entities.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from azure.core.exceptions import ResourceNotFoundError
from azure.data.tables import TableClient

from scheduler_lib.errors import ConflictError, NotFoundError, PreconditionFailedError
from scheduler_lib.store.entity import Entity
from scheduler_lib.store.etag import LostRace, retry_lost_races
from scheduler_lib.store.tables import (
    TableStore,
    as_datetime,
    dumps,
    join_text,
    split_text,
    storage_errors,
    write_entity,
)

TABLE = "SchedulerState"
PARTITION = "metrics"
INSTANCE_PREFIX = "i-"
RETIRED = "retired"
LABELS = "labels"
#: Row keys a `retired` row remembers having folded (a fold follows within minutes).
FOLDED_KEEP = 200


@dataclass(frozen=True)
class MetricsRow:
    """One instance's row (or the retired one): its snapshot text and when it was flushed."""

    row_key: str
    snapshot: str
    flushed_at: datetime | None
    folded: tuple[str, ...] = ()
    etag: str | None = field(default=None, compare=False)

    @property
    def is_instance(self) -> bool:
        return self.row_key.startswith(INSTANCE_PREFIX)


def _row(entity: Any) -> MetricsRow:
    return MetricsRow(
        row_key=entity["RowKey"],
        snapshot=join_text(entity, "Snapshot") or "{}",
        flushed_at=as_datetime(entity.get("FlushedAt")),
        folded=tuple(json.loads(entity.get("Folded") or "[]")),
        etag=entity.metadata.get("etag"),
    )


def metrics_rows(store: TableStore) -> tuple[list[MetricsRow], dict[str, list[str]]]:
    """The instances' and the retired row, and the label registry: one partition query."""
    rows, labels = [], {}
    query = "PartitionKey eq @pk"
    for entity in store.table(TABLE).query_entities(query, parameters={"pk": PARTITION}):
        if entity["RowKey"] == LABELS:
            labels = json.loads(join_text(entity, "Labels") or "{}")
        else:
            rows.append(_row(entity))
    return rows, labels


def save_instance_row(
    store: TableStore, row_key: str, snapshot: str, *, now: datetime, etag: str | None
) -> str | None:
    """Write an instance's snapshot (create it without `etag`); its new ETag, or None when
    the row written with `etag` was folded meanwhile (it is gone, or no longer the same)."""
    entity: Entity = {"PartitionKey": PARTITION, "RowKey": row_key, "FlushedAt": now}
    entity.update(split_text("Snapshot", snapshot))
    try:
        return _write(store.table(TABLE), entity, etag)
    except (NotFoundError, PreconditionFailedError):
        if etag is None:
            raise  # the table itself is missing: not a fold
        return None


def _write(table: TableClient, entity: Entity, etag: str | None) -> str | None:
    """Create the entity (no `etag`) or replace it if unchanged since `etag`; its new ETag."""
    with storage_errors("The metrics row"):
        return write_entity(table, entity, etag=etag, create_only=etag is None).get("etag")


def fold_row(store: TableStore, row: MetricsRow, add: Callable[[str, str], str]) -> None:
    """Add `row`'s snapshot to the retired row (`add(retired, row)` gives the sum), then
    delete `row`. The fold is recorded in the same write, so it happens once."""

    def attempt() -> None:
        table = store.table(TABLE)
        try:
            retired: Any = table.get_entity(PARTITION, RETIRED)
        except ResourceNotFoundError:
            retired = None
        current = _row(retired) if retired is not None else MetricsRow(RETIRED, "{}", None)
        if row.row_key in current.folded:
            return
        folded = [*current.folded, row.row_key][-FOLDED_KEEP:]
        entity: Entity = {"PartitionKey": PARTITION, "RowKey": RETIRED, "Folded": dumps(folded)}
        entity.update(split_text("Snapshot", add(current.snapshot, row.snapshot)))
        try:
            _write(table, entity, current.etag)
        except (PreconditionFailedError, ConflictError) as exc:
            raise LostRace from exc

    retry_lost_races(attempt, what="The retired metrics row")
    with suppress(ResourceNotFoundError):
        store.table(TABLE).delete_entity(PARTITION, row.row_key)


def register_label(store: TableStore, dimension: str, value: str, *, limit: int) -> list[str]:
    """Give `value` a place among `dimension`'s label values if it has none and fewer than
    `limit` are taken; the dimension's values afterwards (ETag-conditional, so two
    instances registering at once never take more than `limit` places)."""

    def attempt() -> list[str]:
        table = store.table(TABLE)
        try:
            entity: Any = table.get_entity(PARTITION, LABELS)
        except ResourceNotFoundError:
            entity = None
        labels = json.loads(join_text(entity, "Labels") or "{}") if entity is not None else {}
        values: list[str] = labels.get(dimension, [])
        if value in values or len(values) >= limit:
            return values
        labels[dimension] = [*values, value]
        written: Entity = {"PartitionKey": PARTITION, "RowKey": LABELS}
        written.update(split_text("Labels", dumps(labels)))
        try:
            _write(table, written, entity.metadata.get("etag") if entity is not None else None)
        except (PreconditionFailedError, ConflictError) as exc:
            raise LostRace from exc
        return labels[dimension]

    return retry_lost_races(attempt, what="The metrics label registry")
