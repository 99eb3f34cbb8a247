"""Point requests through `store/entity_requests.py` (the store's table clients' get, create,
update, upsert and delete), against the SDK's own `TableClient` on the same Azurite: what
each writes (read back by the SDK, every property type), what each read returns (values,
types, ETag and timestamp), and what each raises.

The SDK's client here is made straight from the connection string.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

import pytest
from azure.core import MatchConditions
from azure.core.exceptions import HttpResponseError
from azure.data.tables import (
    EdmType,
    EntityProperty,
    TableClient,
    TableServiceClient,
    UpdateMode,
)

from scheduler_lib.config import Settings
from scheduler_lib.store.table_client import StoreTableClient
from scheduler_lib.store.tables import TableStore
from scheduler_lib.transport_choice import TransportChoice
from tests.support.entity_cases import PROPERTIES, missing_table, operations, seed, stored, typed

TABLE = "JobHistory"
SEVEN_DECIMALS = "2026-03-04T05:06:07.1234567Z"


@pytest.fixture
def sdk(store: TableStore, settings: Settings) -> TableClient:
    """The SDK's own client of the store's table."""
    service = TableServiceClient.from_connection_string(str(settings.storage_connection_string))
    return service.get_table_client(settings.table_name(TABLE))


@pytest.fixture
def ours(store: TableStore) -> StoreTableClient:
    table = store.table(TABLE)
    assert isinstance(table, StoreTableClient) and table._entities is not None
    return table


def _typed(entity: Any) -> dict[str, Any]:
    """An entity's values with their types (a read time: its value and the service's text)."""
    return {name: typed(value) for name, value in entity.items()}


def test_a_read_returns_what_the_sdk_returns(ours: StoreTableClient, sdk: TableClient) -> None:
    sdk.upsert_entity({"PartitionKey": "p", "RowKey": "r 'q' é", **PROPERTIES})
    sdk.upsert_entity(
        {
            "PartitionKey": "p",
            "RowKey": "ticks",
            "When": EntityProperty(SEVEN_DECIMALS, "Edm.DateTime"),
        }
    )
    for row in ("r 'q' é", "ticks"):
        theirs, mine = sdk.get_entity("p", row), ours.get_entity("p", row)
        assert _typed(mine) == _typed(theirs)
        assert list(mine) == list(theirs)
        assert mine.metadata["etag"] == theirs.metadata["etag"]
        assert mine.metadata["timestamp"] == theirs.metadata["timestamp"]
        assert mine.metadata["timestamp"].tables_service_value == (
            theirs.metadata["timestamp"].tables_service_value
        )
    for select in (["Text", "Int64"], "Text,Yes", ["RowKey"]):
        assert _typed(ours.get_entity("p", "r 'q' é", select=select)) == _typed(
            sdk.get_entity("p", "r 'q' é", select=select)
        )


def test_every_write_stores_what_the_sdks_stores(ours: StoreTableClient, sdk: TableClient) -> None:
    for name, table in (("ours", ours), ("sdk", sdk)):
        etags = seed(table, name)
        for operation in operations(name, etags):
            kind, entity, options = (*operation, {})[:3]
            if kind == "delete":
                table.delete_entity(entity, **options)
            else:
                getattr(table, f"{kind}_entity")(entity, **options)
    assert stored(ours, "ours") == stored(sdk, "sdk")


def test_a_write_returns_the_new_etag(ours: StoreTableClient, sdk: TableClient) -> None:
    row = {"PartitionKey": "p", "RowKey": "r", "N": 1}
    writes: list[Callable[[], dict[str, Any]]] = [
        lambda: ours.create_entity(row),
        lambda: ours.upsert_entity({**row, "N": 2}, mode=UpdateMode.REPLACE),
        lambda: ours.update_entity({**row, "N": 3}),
    ]
    for write in writes:
        metadata = write()
        assert metadata["etag"] == sdk.get_entity("p", "r").metadata["etag"]
        assert isinstance(metadata["date"], datetime) and metadata["version"]


def test_a_read_time_is_written_back_as_the_service_wrote_it(
    ours: StoreTableClient, sdk: TableClient
) -> None:
    """.NET writes 7 decimals; a read and rewrite (as the store's read-modify-writes do)
    keeps them, as the SDK does."""
    sdk.upsert_entity(
        {
            "PartitionKey": "p",
            "RowKey": "r",
            "When": EntityProperty(SEVEN_DECIMALS, EdmType.DATETIME),
        }
    )
    entity = ours.get_entity("p", "r")
    ours.update_entity(entity, mode=UpdateMode.REPLACE)
    assert sdk.get_entity("p", "r")["When"].tables_service_value == SEVEN_DECIMALS


def _outcome(call: Callable[[], object]) -> tuple[str, int | None]:
    try:
        call()
    except HttpResponseError as exc:
        return type(exc).__name__, exc.status_code
    except (ValueError, TypeError) as exc:
        return type(exc).__name__, None
    return "ok", None


def test_each_failure_raises_what_the_sdk_raises(
    ours: StoreTableClient, sdk: TableClient, store: TableStore, settings: Settings
) -> None:
    service = TableServiceClient.from_connection_string(str(settings.storage_connection_string))
    ours_missing = missing_table(store)
    theirs_missing = service.get_table_client("nosuchtable")
    stale: dict[str, str] = {}

    def cases(table: Any, missing: Any, partition: str) -> dict[str, Callable[[], object]]:
        row = {"PartitionKey": partition, "RowKey": "r", "N": 1}
        stale[partition] = table.upsert_entity(row)["etag"]
        table.upsert_entity({**row, "N": 2})  # the ETag above is now stale
        if_stale = {"etag": stale[partition], "match_condition": MatchConditions.IfNotModified}
        gone = {"PartitionKey": partition, "RowKey": "gone"}
        return {
            "read a missing entity": lambda: table.get_entity(partition, "gone"),
            "read from a missing table": lambda: missing.get_entity(partition, "r"),
            "write to a missing table": lambda: missing.upsert_entity(row),
            "create an existing entity": lambda: table.create_entity(row),
            "replace a changed entity": lambda: table.update_entity(
                row, mode=UpdateMode.REPLACE, **if_stale
            ),
            "merge a changed entity": lambda: table.update_entity(row, **if_stale),
            "update a missing entity": lambda: table.update_entity(gone),
            "delete a missing entity": lambda: table.delete_entity(partition, "gone"),
            "delete a changed entity": lambda: table.delete_entity(partition, "r", **if_stale),
            "IfNotModified without an ETag": lambda: table.update_entity(
                row, match_condition=MatchConditions.IfNotModified
            ),
            "an unknown mode": lambda: table.upsert_entity(row, mode="sideways"),
            "a key that is not a string": lambda: table.get_entity(partition, 7),
            "a value of no table type": lambda: table.upsert_entity({**row, "X": [1]}),
        }

    mine = {name: _outcome(call) for name, call in cases(ours, ours_missing, "ours").items()}
    theirs = {name: _outcome(call) for name, call in cases(sdk, theirs_missing, "sdk").items()}
    assert mine == theirs
    assert mine["delete a missing entity"] == ("ok", None)
    assert mine["delete a changed entity"] == ("ResourceModifiedError", 412)


def test_deletes_take_keys_or_an_entity_as_the_sdk_does(
    ours: StoreTableClient, sdk: TableClient
) -> None:
    for row in ("a", "b", "c", "d"):
        sdk.upsert_entity({"PartitionKey": "p", "RowKey": row})
    read = sdk.get_entity("p", "d")
    ours.delete_entity("p", "a")
    ours.delete_entity(partition_key="p", row_key="b")
    ours.delete_entity({"PartitionKey": "p", "RowKey": "c"})
    ours.delete_entity(read, match_condition=MatchConditions.IfNotModified)  # its own ETag
    assert list(sdk.query_entities("PartitionKey eq 'p'")) == []


def test_the_operator_switch_gives_the_point_requests_back_to_the_sdk(
    settings: Settings,
) -> None:
    """`SCHEDULER_STORAGE_TRANSPORT=requests`: the SDKs as they come, point requests too."""
    store = TableStore(replace(settings, storage_transport=TransportChoice.REQUESTS))
    store.ensure_tables()
    table = store.table(TABLE)
    assert isinstance(table, StoreTableClient) and table._entities is None
    table.upsert_entity({"PartitionKey": "p", "RowKey": "r", "N": 1})
    assert table.get_entity("p", "r")["N"] == 1
