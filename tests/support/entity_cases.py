"""Entities of every property type and operations of every kind, written the same way
through the store's table client and the SDK's own (tests/store/test_changeset.py for
transactions, tests/store/test_entity_requests.py for point requests), and what a partition
holds afterwards, read back by the SDK with each value's type."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from enum import StrEnum
from typing import Any
from uuid import UUID

from azure.core import MatchConditions
from azure.data.tables import EdmType, EntityProperty, TableClient, UpdateMode

from scheduler_lib.store.table_client import StoreTableClient
from scheduler_lib.store.tables import TableStore


class Colour(StrEnum):
    RED = "red"


#: A property of every type the SDK serializes, by Python type and as EntityProperty.
PROPERTIES: dict[str, Any] = {
    "Text": "naïve 'quoted' \"text\" \u20ac\n",
    "Empty": "",
    "Int32": 2**31 - 1,
    "Negative": -(2**31),
    "Int64": EntityProperty(2**62, EdmType.INT64),
    "SmallInt64": EntityProperty(-5, EdmType.INT64),
    "When": datetime(2026, 11, 26, 9, 30, 15, 123456, tzinfo=UTC),
    "WhenElsewhere": datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=5, minutes=30))),
    "WhenText": EntityProperty("2026-03-04T05:06:07Z", EdmType.DATETIME),
    "Bytes": b"\x00\xff binary",
    "BytesTyped": EntityProperty(b"\x01\x02", EdmType.BINARY),
    "Guid": UUID("12345678-1234-5678-1234-567812345678"),
    "GuidTyped": EntityProperty("87654321-4321-8765-4321-876543218765", EdmType.GUID),
    "Yes": True,
    "No": False,
    "BoolTyped": EntityProperty(True, EdmType.BOOLEAN),
    "Float": 1.5,
    "WholeFloat": 2.0,
    "Tiny": 1e-300,
    "NotANumber": float("nan"),
    "Infinite": float("inf"),
    "MinusInfinite": float("-inf"),
    "DoubleTyped": EntityProperty(3, EdmType.DOUBLE),
    "Int32Typed": EntityProperty(7, EdmType.INT32),
    "StringTyped": EntityProperty(12, EdmType.STRING),
    "Colour": Colour.RED,
    "Nothing": None,
    "NothingTyped": EntityProperty(None, EdmType.STRING),
}


def operations(partition: str, etags: dict[str, str]) -> list[tuple[Any, ...]]:
    """One of every operation kind (on rows `_seed` wrote, with their ETags)."""

    def row(key: str, **more: Any) -> dict[str, Any]:
        return {"PartitionKey": partition, "RowKey": key, **more}

    conditional = {"match_condition": MatchConditions.IfNotModified}
    return [
        ("create", row("created 'quoted' é%20+", **PROPERTIES)),
        ("upsert", row("replaced", Only=1), {"mode": UpdateMode.REPLACE}),
        ("upsert", row("merged", Added="yes")),
        ("upsert", row("new-merged", Added="yes"), {"mode": UpdateMode.MERGE}),
        (
            "update",
            row("updated", Changed=2),
            {"mode": UpdateMode.REPLACE, "etag": etags["updated"], **conditional},
        ),
        ("update", row("merged-unconditionally", Changed=3)),
        (
            "update",
            row("merged-conditionally", Changed=4),
            {"etag": etags["merged-conditionally"], **conditional},
        ),
        ("delete", row("deleted"), {"etag": etags["deleted"], **conditional}),
        ("delete", row("deleted-unconditionally")),
    ]


def seed(table: TableClient, partition: str) -> dict[str, str]:
    keys = ["replaced", "merged", "updated", "merged-unconditionally", "merged-conditionally"]
    keys += ["deleted", "deleted-unconditionally"]
    return {
        key: table.upsert_entity({"PartitionKey": partition, "RowKey": key, "Kept": "k"})["etag"]
        for key in keys
    }


def stored(table: TableClient, partition: str) -> list[tuple[str, dict[str, Any]]]:
    """A partition's entities as read back (values with their types), PartitionKey aside."""
    rows = table.query_entities("PartitionKey eq @p", parameters={"p": partition})
    return [
        (
            e["RowKey"],
            {k: typed(v) for k, v in e.items() if k != "PartitionKey"},
        )
        for e in rows
    ]


def typed(value: Any) -> tuple[Any, ...]:
    """A value read back, with its type; a time (the SDK's own datetime subclass, or the
    store's) as a datetime with the service's text of it."""
    if isinstance(value, datetime):
        return ("datetime", value, value.tables_service_value)  # type: ignore[attr-defined]  # both read types have it
    return (type(value).__name__, comparable(value))


def comparable(value: Any) -> Any:
    return "nan" if isinstance(value, float) and value != value else value


def missing_table(store: TableStore) -> StoreTableClient:
    """The store's kind of table client (`StoreTableClient`, its lighter requests as the
    store's) for a table that does not exist."""
    return StoreTableClient(
        store.service.url,
        table_name="nosuchtable",
        credential=store.service.credential,
        changesets=store._changesets,
        entities=store._entities,
        queries=store._queries,
    )
