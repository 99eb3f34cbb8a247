"""Entity-group transactions through `store/changeset.py`, against the SDK's own
`TableClient.submit_transaction` on the same Azurite: what each writes (read back with
`get_entity`, every property type) and returns, and what each raises.

The SDK's client here is made straight from the connection string (the store's clients
all send transactions through `Changesets`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from azure.core import MatchConditions
from azure.core.exceptions import HttpResponseError, ServiceRequestError
from azure.data.tables import (
    EdmType,
    EntityProperty,
    RequestTooLargeError,
    TableClient,
    TableServiceClient,
    TableTransactionError,
)
from azure.data.tables._serialize import _add_entity_properties

from devtools.azurite import free_port
from scheduler_lib.config import Settings
from scheduler_lib.storage_patience import INTERACTIVE
from scheduler_lib.store.changeset_body import entity_json
from scheduler_lib.store.table_client import StoreTableClient
from scheduler_lib.store.tables import TableStore
from tests.support.entity_cases import PROPERTIES, operations, seed, stored

TABLE = "JobHistory"


def test_entities_serialize_as_the_sdk_serializes_them() -> None:
    """The guard on the SDK's private serializer (`_add_entity_properties`): if a new
    azure-data-tables writes any type differently, this fails and changeset_body follows."""
    entity = {"PartitionKey": "p", "RowKey": "r", **PROPERTIES}
    ours = json.loads(entity_json(entity))
    theirs = json.loads(json.dumps(_add_entity_properties(entity)))
    assert list(ours.items()) == list(theirs.items())
    for refused in ({"Big": 2**31}, {"Huge": EntityProperty(2**63, EdmType.INT64)}, {"X": [1]}):
        with pytest.raises(TypeError):
            _add_entity_properties(refused)
        with pytest.raises(TypeError):
            entity_json(refused)


@pytest.fixture
def sdk(store: TableStore, settings: Settings) -> TableClient:
    """The SDK's own client of the store's table."""
    service = TableServiceClient.from_connection_string(str(settings.storage_connection_string))
    return service.get_table_client(settings.table_name(TABLE))


def test_every_operation_and_type_stores_what_the_sdk_stores(
    store: TableStore, sdk: TableClient
) -> None:
    ours = store.table(TABLE)
    assert isinstance(ours, StoreTableClient)
    results = {}
    for name, table in (("ours", ours), ("sdk", sdk)):
        etags = seed(table, name)
        results[name] = table.submit_transaction(operations(name, etags))

    assert stored(ours, "ours") == stored(sdk, "sdk")
    assert [sorted(r) for r in results["ours"]] == [sorted(r) for r in results["sdk"]]
    written = [r for r in results["ours"] if r]
    assert len(written) == 7  # every create, upsert and update answers its new ETag
    created = ours.get_entity("ours", "created 'quoted' é%20+")
    assert results["ours"][0]["etag"] == created.metadata["etag"]
    assert created["Int64"] == EntityProperty(2**62, EdmType.INT64)
    assert created["When"] == PROPERTIES["When"] and created["Bytes"] == PROPERTIES["Bytes"]


def test_an_etag_mismatch_fails_the_whole_transaction_at_its_index(
    store: TableStore, sdk: TableClient
) -> None:
    for partition, table in (("ours", store.table(TABLE)), ("sdk", sdk)):
        stale = table.upsert_entity({"PartitionKey": partition, "RowKey": "c", "N": 0})["etag"]
        table.upsert_entity({"PartitionKey": partition, "RowKey": "c", "N": 1})
        operations = [
            ("create", {"PartitionKey": partition, "RowKey": "a"}),
            ("upsert", {"PartitionKey": partition, "RowKey": "b"}),
            (
                "update",
                {"PartitionKey": partition, "RowKey": "c", "N": 2},
                {"etag": stale, "match_condition": MatchConditions.IfNotModified},
            ),
            ("create", {"PartitionKey": partition, "RowKey": "d"}),
        ]
        with pytest.raises(TableTransactionError) as failed:
            table.submit_transaction(operations)
        assert (failed.value.index, failed.value.status_code) == (2, 412)
        assert failed.value.error_code == "UpdateConditionNotSatisfied"
        assert [row for row, _ in stored(table, partition)] == ["c"]  # nothing applied


def _raised(action: Callable[[], Any]) -> Exception:
    try:
        action()
    except Exception as exc:  # the exception is what is compared
        return exc
    raise AssertionError("nothing raised")


def _same_error(ours: Exception, theirs: Exception) -> None:
    assert type(ours) is type(theirs)
    for name in ("status_code", "error_code", "index", "reason"):
        assert getattr(ours, name, None) == getattr(theirs, name, None), name
    assert (
        str(ours).split("\n")[0].split("RequestId")[0]
        == str(theirs).split("\n")[0].split("RequestId")[0]
    )


def test_creating_an_existing_entity_raises_as_the_sdk_does(
    store: TableStore, sdk: TableClient
) -> None:
    ours = store.table(TABLE)
    ours.create_entity({"PartitionKey": "p", "RowKey": "b"})
    operations = [
        ("upsert", {"PartitionKey": "p", "RowKey": "a"}),
        ("create", {"PartitionKey": "p", "RowKey": "b"}),
    ]
    mine = _raised(lambda: ours.submit_transaction(operations))
    _same_error(mine, _raised(lambda: sdk.submit_transaction(operations)))
    assert isinstance(mine, TableTransactionError) and mine.index == 1
    assert mine.error_code == "EntityAlreadyExists"


def test_a_missing_table_raises_as_the_sdk_does(
    store: TableStore, sdk: TableClient, settings: Settings
) -> None:
    store.service.delete_table(settings.table_name(TABLE))
    operations = [("upsert", {"PartitionKey": "p", "RowKey": "a"})]
    mine = _raised(lambda: store.table(TABLE).submit_transaction(operations))
    _same_error(mine, _raised(lambda: sdk.submit_transaction(operations)))
    assert getattr(mine, "error_code", None) in ("TableNotFound", "ResourceNotFound")


def test_a_transaction_too_large_raises_as_the_sdk_does(
    store: TableStore, sdk: TableClient
) -> None:
    big = "x" * 30_000  # 100 entities of 60 KB of UTF-16: past the 4 MiB a transaction may hold
    operations = [
        ("upsert", {"PartitionKey": "p", "RowKey": f"r{i}", "A": big, "B": big}) for i in range(100)
    ]
    mine = _raised(lambda: store.table(TABLE).submit_transaction(operations))
    _same_error(mine, _raised(lambda: sdk.submit_transaction(operations)))
    assert isinstance(mine, RequestTooLargeError)
    assert stored(sdk, "p") == []


def test_a_wrong_account_key_raises_as_the_sdk_does(settings: Settings, store: TableStore) -> None:
    """Azurite checks SharedKey signatures as the service does: a wrong key is refused."""
    connection = str(settings.storage_connection_string)
    key = next(p.split("=", 1)[1] for p in connection.split(";") if p.startswith("AccountKey="))
    wrong = connection.replace(key, "d3Jvbmcga2V5" * 4)
    operations = [("upsert", {"PartitionKey": "p", "RowKey": "a"})]
    table = TableStore(replace(settings, storage_connection_string=wrong)).table(TABLE)
    sdk = TableServiceClient.from_connection_string(wrong).get_table_client(
        settings.table_name(TABLE)
    )
    mine = _raised(lambda: table.submit_transaction(operations))
    _same_error(mine, _raised(lambda: sdk.submit_transaction(operations)))
    assert isinstance(mine, HttpResponseError) and mine.status_code == 403
    assert store.table(TABLE).submit_transaction(operations)  # the right key still works


def test_storage_out_of_reach_raises_the_transport_error(settings: Settings) -> None:
    port = free_port()  # nothing listens there
    connection = str(settings.storage_connection_string)
    unreachable = connection.replace(
        connection.split("TableEndpoint=")[1].split(";")[0],
        f"http://127.0.0.1:{port}/devstoreaccount1",
    )
    table = TableStore(
        replace(settings, storage_connection_string=unreachable), patience=INTERACTIVE
    ).table(TABLE)
    with pytest.raises(ServiceRequestError):
        table.submit_transaction([("upsert", {"PartitionKey": "p", "RowKey": "a"})])


def test_operations_the_sdk_refuses_are_refused_before_sending(store: TableStore) -> None:
    table = store.table(TABLE)
    with pytest.raises(ValueError, match="Partition Keys"):
        table.submit_transaction(
            [
                ("upsert", {"PartitionKey": "a", "RowKey": "1"}),
                ("upsert", {"PartitionKey": "b", "RowKey": "1"}),
            ]
        )
    with pytest.raises(ValueError, match="Unrecognized operation"):
        table.submit_transaction([("replace", {"PartitionKey": "a", "RowKey": "1"})])
    with pytest.raises(ValueError, match="IfNotModified"):
        table.submit_transaction(
            [
                (
                    "delete",
                    {"PartitionKey": "a", "RowKey": "1"},
                    {"match_condition": MatchConditions.IfNotModified},
                )
            ]
        )
    with pytest.raises(TypeError):
        table.submit_transaction([("upsert", {"PartitionKey": "a", "RowKey": "1", "Big": 2**40})])
    assert table.submit_transaction([]) == []
