"""Each due-index shard's dispatch state and lease, in the `SchedulerState` table.

One entity per shard, PartitionKey `dispatch-shards`, RowKey the shard (`03`):
- `Cursor`: the last minute of this shard whose rows were all handled (the dispatcher's
  cursor, per shard: a job failing in one shard holds back only that shard's cursor).
- `HandledTick`: the tick instant of the last (minute, shard) pair handled to the end; a
  control message for that instant or an older one is a duplicate and does nothing.
- `LeaseOwner` / `LeaseUntil`: who handles the shard now, and until when. Taking, renewing
  and giving back the lease are ETag-conditional writes, so of two workers only one holds it;
  a worker that dies leaves a lease that expires, and the next worker takes the shard over.
  A worker renews the lease between chunks (`renew_shard`), so it may run longer than one
  lease; one that lost its lease stops at the next renewal.

Nothing here decides what is dispatched: a worker that lost its lease while stalled may still
finish the chunk in hand, which is safe because each job's advance is ETag-conditional and
each message's tag is derived from its occurrence (see `dispatch/job.py`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, NotRequired, TypedDict

from azure.core.exceptions import ResourceExistsError, ResourceModifiedError, ResourceNotFoundError
from azure.data.tables import UpdateMode

from scheduler_lib.domain.json_values import JSONObject
from scheduler_lib.store.tables import TableStore, as_datetime, dumps, etag_kwargs, set_present

TABLE = "SchedulerState"
PARTITION = "dispatch-shards"


class LeaseLostError(Exception):
    """Another worker took the shard over (this one's lease had expired)."""


class _ShardEntity(TypedDict):
    """The stored form of `ShardState`."""

    PartitionKey: str
    RowKey: str
    LeaseOwner: str
    LastPair: str  # JSON
    Cursor: NotRequired[datetime]
    HandledTick: NotRequired[datetime]
    LeaseUntil: NotRequired[datetime]


@dataclass(frozen=True)
class ShardState:
    """One shard's stored state; `etag` as read (None: never stored)."""

    shard: int
    cursor: datetime | None = None
    handled_tick: datetime | None = None
    owner: str = ""
    lease_until: datetime | None = None
    last_pair: JSONObject = field(default_factory=dict)  # its last pair's summary (JSON)
    etag: str | None = None

    def number(self, name: str) -> float:
        """A count or duration of its last pair's summary (0 when it has none)."""
        value = self.last_pair.get(name, 0)
        return float(value) if isinstance(value, int | float) else 0.0

    def leased_to_other(self, owner: str, now: datetime) -> bool:
        return (
            bool(self.owner)
            and self.owner != owner
            and (self.lease_until is not None and self.lease_until > now)
        )


def _row(shard: int) -> str:
    return f"{shard:02d}"


def _from_entity(shard: int, entity: Any) -> ShardState:
    return ShardState(
        shard,
        cursor=as_datetime(entity.get("Cursor")),
        handled_tick=as_datetime(entity.get("HandledTick")),
        owner=entity.get("LeaseOwner") or "",
        lease_until=as_datetime(entity.get("LeaseUntil")),
        last_pair=json.loads(entity.get("LastPair") or "{}"),
        etag=entity.metadata.get("etag"),
    )


def get_shard_state(store: TableStore, shard: int) -> ShardState:
    try:
        entity = store.table(TABLE).get_entity(PARTITION, _row(shard))
    except ResourceNotFoundError:
        return ShardState(shard)
    return _from_entity(shard, entity)


def shard_states(store: TableStore) -> list[ShardState]:
    """Every stored shard's state (one partition query), for the health endpoint."""
    entities = store.table(TABLE).query_entities("PartitionKey eq @p", parameters={"p": PARTITION})
    return sorted((_from_entity(int(e["RowKey"]), e) for e in entities), key=lambda s: s.shard)


def _write(store: TableStore, state: ShardState) -> ShardState:
    """Store `state` if the entity is still as read (`state.etag`); raises LeaseLostError."""
    entity: _ShardEntity = {
        "PartitionKey": PARTITION,
        "RowKey": _row(state.shard),
        "LeaseOwner": state.owner,
        "LastPair": dumps(state.last_pair),
    }
    set_present(
        entity, Cursor=state.cursor, HandledTick=state.handled_tick, LeaseUntil=state.lease_until
    )
    table = store.table(TABLE)
    try:
        if state.etag is None:
            meta = table.create_entity(entity)
        else:
            meta = table.update_entity(entity, mode=UpdateMode.REPLACE, **etag_kwargs(state.etag))
    except (ResourceExistsError, ResourceModifiedError, ResourceNotFoundError) as exc:
        raise LeaseLostError(f"shard {state.shard} changed meanwhile") from exc
    return replace(state, etag=meta.get("etag"))


def acquire_shard(
    store: TableStore, shard: int, *, owner: str, now: datetime, duration: timedelta
) -> tuple[ShardState | None, ShardState]:
    """Take the shard's lease until `now + duration`: returns (the lease, None when another
    worker holds it unexpired or won the race to take it; the state as read)."""
    current = get_shard_state(store, shard)
    if current.leased_to_other(owner, now):
        return None, current
    try:
        return _write(store, replace(current, owner=owner, lease_until=now + duration)), current
    except LeaseLostError:
        return None, current


def renew_shard(
    store: TableStore, lease: ShardState, *, now: datetime, duration: timedelta
) -> ShardState:
    """Extend a held lease; raises LeaseLostError when another worker took the shard over."""
    return _write(store, replace(lease, lease_until=now + duration))


def release_shard(
    store: TableStore,
    lease: ShardState,
    *,
    cursor: datetime | None = None,
    handled_tick: datetime | None = None,
    last_pair: JSONObject | None = None,
) -> ShardState:
    """Give the lease back, with the pair's results (None: keep what was stored). Raises
    LeaseLostError when another worker took the shard over: its results stand."""
    done = replace(
        lease,
        owner="",
        lease_until=None,
        cursor=cursor if cursor is not None else lease.cursor,
        handled_tick=handled_tick if handled_tick is not None else lease.handled_tick,
        last_pair=last_pair if last_pair is not None else lease.last_pair,
    )
    return _write(store, done)
