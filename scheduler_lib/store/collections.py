"""Job collections in Table storage.

`JobCollections`: PartitionKey = subscription id, RowKey = `resourcegroup|collection`
(lower-cased), so listing a subscription reads one partition and listing a resource group
is a RowKey range inside it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from scheduler_lib.domain import SEPARATOR, CollectionRecord
from scheduler_lib.store.entity import Entity
from scheduler_lib.store.tables import (
    TableStore,
    dumps,
    etag_kwargs,
    join_text,
    loads,
    prefix_range,
    split_text,
    storage_errors,
    stored_text,
    write_entity,
)

TABLE = "JobCollections"


def _row_key(resource_group: str, name: str) -> str:
    return f"{resource_group}{SEPARATOR}{name}".lower()


def _to_entity(record: CollectionRecord) -> Entity:
    return {
        "PartitionKey": record.subscription_id.lower(),
        "RowKey": _row_key(record.resource_group, record.name),
        "SubscriptionId": record.subscription_id,
        "ResourceGroup": record.resource_group,
        "Name": record.name,
        "Location": record.location or "",
        "Properties": dumps(record.properties),
        **split_text("Tags", dumps(record.tags)),
    }


def _from_entity(entity: Any) -> CollectionRecord:
    return CollectionRecord(
        subscription_id=entity["SubscriptionId"],
        resource_group=entity["ResourceGroup"],
        name=entity["Name"],
        location=stored_text(entity.get("Location") or "") or None,
        tags=loads(join_text(entity, "Tags") or "{}"),
        properties=loads(entity.get("Properties") or "{}"),
        etag=entity.metadata.get("etag"),
    )


def get_collection(
    store: TableStore, subscription_id: str, resource_group: str, name: str
) -> CollectionRecord:
    """The collection, or NotFoundError."""
    with storage_errors(f"Job collection '{name}'"):
        entity = store.table(TABLE).get_entity(
            subscription_id.lower(), _row_key(resource_group, name)
        )
    return _from_entity(entity)


def list_collections(
    store: TableStore, subscription_id: str, resource_group: str | None = None
) -> list[CollectionRecord]:
    """All collections of a subscription, or of one resource group in it, by name."""
    query = f"PartitionKey eq '{subscription_id.lower().replace(chr(39), chr(39) * 2)}'"
    if resource_group is not None:
        query += " and " + prefix_range(f"{resource_group}{SEPARATOR}".lower())
    entities = store.table(TABLE).query_entities(query)
    return [_from_entity(e) for e in entities]


def all_collections(store: TableStore) -> list[CollectionRecord]:
    """Every collection of every subscription (the dashboard's overview; one small row each)."""
    return [_from_entity(e) for e in store.table(TABLE).list_entities()]


def put_collection(
    store: TableStore,
    record: CollectionRecord,
    *,
    etag: str | None = None,
    create_only: bool = False,
) -> CollectionRecord:
    """Create or replace a collection and return it with its new ETag.

    `create_only` fails with ConflictError if it already exists (two racing creates);
    `etag` makes the replace conditional (PreconditionFailedError when it changed).
    """
    with storage_errors(f"Job collection '{record.name}'"):
        meta = write_entity(
            store.table(TABLE), _to_entity(record), etag=etag, create_only=create_only
        )
    return replace(record, etag=meta.get("etag"))


def delete_collection(
    store: TableStore, record: CollectionRecord, *, etag: str | None = None
) -> None:
    """Delete the collection entity (its jobs are deleted by the caller first)."""
    with storage_errors(f"Job collection '{record.name}'"):
        store.table(TABLE).delete_entity(
            record.subscription_id.lower(),
            _row_key(record.resource_group, record.name),
            **etag_kwargs(etag),
        )
