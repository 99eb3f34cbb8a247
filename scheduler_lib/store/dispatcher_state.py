"""The dispatcher's own state in the `SchedulerState` table: its cursor and its last tick.

One entity, PartitionKey `dispatcher`, RowKey `state`:
- `Cursor`: the last minute whose due-index rows were all handled. After downtime the next
  tick reads from here, so it sees (and postpones) what was missed instead of skipping it
  silently. Absent before the first tick.
- `LastTickAt` / `LastTick`: when the last tick ran and its summary (`TickSummary`, as
  JSON), for the health endpoint, which calls `get_dispatcher_state`.

The entity is written with a plain upsert, last writer wins: two racing ticks both handled
every row they read, so either cursor is safe, and a cursor that moves back only makes the
next tick re-read rows that are already gone.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NotRequired, TypedDict

from azure.core.exceptions import ResourceNotFoundError
from azure.data.tables import UpdateMode

from scheduler_lib.domain.json_values import JSONObject
from scheduler_lib.store.tables import TableStore, as_datetime, dumps, set_present

TABLE = "SchedulerState"
PARTITION = "dispatcher"
ROW = "state"


class _StateEntity(TypedDict):
    """The stored form of `DispatcherState`."""

    PartitionKey: str
    RowKey: str
    LastTick: str  # JSON
    Cursor: NotRequired[datetime]
    LastTickAt: NotRequired[datetime]


class _RepairEntity(TypedDict):
    PartitionKey: str
    RowKey: str
    Report: str  # JSON


@dataclass(frozen=True)
class TickSummary:
    """A tick's summary as the health endpoint shows it: its counts (a tick's `TickReport`
    numbers, or its shards' added up by the coordinator: `messages_sent`, `postponed`,
    `stale_dropped`, `failed`, `entities_read`, `pairs_sent`, ...), its `duration` in
    seconds and its instants (`now`, `cursor`, the minutes read). Stored as one flat JSON
    object, read and written here only (`to_json`, `from_json`)."""

    counts: dict[str, int] = field(default_factory=dict)
    duration: float | None = None
    times: dict[str, str] = field(default_factory=dict)  # ISO 8601 instants, minute keys

    def to_json(self) -> JSONObject:
        body: JSONObject = {**self.counts, **self.times}
        if self.duration is not None:
            body["duration"] = self.duration
        return body

    @classmethod
    def from_json(cls, value: object) -> TickSummary:
        """The summary of a stored object (numbers and strings; anything else left out)."""
        if not isinstance(value, dict):
            return cls()
        numbers = {k: v for k, v in value.items() if type(v) in (int, float)}
        duration = numbers.pop("duration", None)
        return cls(
            counts={k: v for k, v in numbers.items() if isinstance(v, int)},
            duration=None if duration is None else float(duration),
            times={k: v for k, v in value.items() if isinstance(v, str)},
        )


@dataclass(frozen=True)
class DispatcherState:
    """What the dispatcher remembers between ticks; all None/empty before the first tick."""

    cursor: datetime | None = None
    last_tick_at: datetime | None = None
    last_tick: TickSummary = field(default_factory=TickSummary)


def get_dispatcher_state(store: TableStore) -> DispatcherState:
    """The stored state (an empty one before the first tick). The health endpoint uses it."""
    try:
        entity = store.table(TABLE).get_entity(PARTITION, ROW)
    except ResourceNotFoundError:
        return DispatcherState()
    return DispatcherState(
        cursor=as_datetime(entity.get("Cursor")),
        last_tick_at=as_datetime(entity.get("LastTickAt")),
        last_tick=TickSummary.from_json(json.loads(entity.get("LastTick") or "{}")),
    )


#: Where the last consistency check (`anti_entropy`) leaves its result for the health endpoint.
REPAIR_ROW = "repair"


def get_repair_state(store: TableStore) -> dict[str, Any]:
    """The last consistency check's report (empty before the first). Still `Any`: its
    shape is `dispatch/anti_entropy.RepairReport`'s, a layer above, and `health` reads its
    numbers unchecked (a record like `TickSummary` is the next step)."""
    try:
        entity = store.table(TABLE).get_entity(PARTITION, REPAIR_ROW)
    except ResourceNotFoundError:
        return {}
    return json.loads(entity.get("Report") or "{}")


def save_repair_state(store: TableStore, report: JSONObject) -> None:
    """Store the consistency check's report (one upsert, last writer wins)."""
    entity: _RepairEntity = {
        "PartitionKey": PARTITION,
        "RowKey": REPAIR_ROW,
        "Report": dumps(report),
    }
    store.table(TABLE).upsert_entity(entity, mode=UpdateMode.REPLACE)


def save_dispatcher_state(store: TableStore, state: DispatcherState) -> None:
    """Store the cursor and the last tick's summary (one upsert)."""
    entity: _StateEntity = {
        "PartitionKey": PARTITION,
        "RowKey": ROW,
        "LastTick": dumps(state.last_tick.to_json()),
    }
    set_present(entity, Cursor=state.cursor, LastTickAt=state.last_tick_at)
    store.table(TABLE).upsert_entity(entity, mode=UpdateMode.REPLACE)
