"""Queries through `store/entity_queries.py` (the store's table clients' `query_entities`
and `list_entities`), against the SDK's own `TableClient` on the same Azurite: the same
entities (values, types, ETags) for filters with parameters of every type, a `$select`, and
page by page with the same continuation tokens; the same errors.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

import pytest
from azure.core.exceptions import HttpResponseError
from azure.data.tables import EdmType, EntityProperty, TableClient, TableServiceClient

from scheduler_lib.config import Settings
from scheduler_lib.store.entity_queries import substitute
from scheduler_lib.store.table_client import StoreTableClient
from scheduler_lib.store.tables import TableStore
from tests.support.entity_cases import missing_table, typed

TABLE = "JobHistory"
START = datetime(2026, 11, 26, 12, 0, 0, 250000, tzinfo=UTC)


@pytest.fixture
def sdk(store: TableStore, settings: Settings) -> TableClient:
    service = TableServiceClient.from_connection_string(str(settings.storage_connection_string))
    return service.get_table_client(settings.table_name(TABLE))


@pytest.fixture
def ours(store: TableStore, sdk: TableClient) -> StoreTableClient:
    table = store.table(TABLE)
    assert isinstance(table, StoreTableClient) and table._queries is not None
    for n in range(7):
        sdk.upsert_entity(
            {
                "PartitionKey": "p'q" if n % 2 else "p",
                "RowKey": f"r{n}",
                "N": n + 2,
                "Big": EntityProperty(2**40 + n, EdmType.INT64),
                "Flag": n % 3 == 0,
                "When": START + timedelta(minutes=n),
                "Id": UUID(int=n),
                "Raw": bytes([n, 255]),
                "Ratio": n / 4,
                "Text": f"it's {n}",
            }
        )
    return table


def _rows(entities: Any) -> list[Any]:
    return [({k: typed(v) for k, v in e.items()}, e.metadata["etag"]) for e in entities]


FILTERS: list[tuple[str, dict[str, Any]]] = [
    ("PartitionKey eq @pk", {"pk": "p'q"}),
    ("N ge @n and N lt @m", {"n": 3, "m": 7}),
    ("Big eq @big", {"big": 2**40 + 2}),
    ("Flag eq @flag", {"flag": True}),
    ("When gt @when", {"when": START + timedelta(minutes=3)}),
    ("Id eq @id", {"id": UUID(int=4)}),
    ("Raw eq @raw", {"raw": bytes([5, 255])}),
    ("Ratio gt @ratio", {"ratio": 0.6}),
    ("Text eq @text", {"text": "it's 6"}),
    ("RowKey ge 'r2'", {}),
]


@pytest.mark.parametrize(("query", "parameters"), FILTERS, ids=[f for f, _ in FILTERS])
def test_a_query_returns_what_the_sdks_returns(
    ours: StoreTableClient, sdk: TableClient, query: str, parameters: dict[str, Any]
) -> None:
    mine = _rows(ours.query_entities(query, parameters=parameters))
    assert mine == _rows(sdk.query_entities(query, parameters=parameters))
    assert mine  # every filter matches some rows


def test_selected_properties_and_every_entity(ours: StoreTableClient, sdk: TableClient) -> None:
    select = ["RowKey", "N"]
    assert _rows(ours.query_entities("N gt @n", parameters={"n": 4}, select=select)) == _rows(
        sdk.query_entities("N gt @n", parameters={"n": 4}, select=select)
    )
    assert _rows(ours.list_entities()) == _rows(sdk.list_entities())
    assert len(_rows(ours.list_entities())) == 7


def test_pages_and_their_tokens_are_the_sdks(ours: StoreTableClient, sdk: TableClient) -> None:
    def pages(table: Any, token: Any = None) -> list[tuple[list[Any], Any]]:
        found = []
        pager = table.query_entities("N ge @n", parameters={"n": 0}, results_per_page=3)
        paged = pager.by_page(continuation_token=token)
        for page in paged:
            found.append((_rows(page), paged.continuation_token))
        return found

    mine = pages(ours)
    assert mine == pages(sdk)
    assert [len(rows) for rows, _ in mine] == [3, 3, 1] and mine[-1][1] is None
    middle = mine[0][1]
    assert pages(ours, middle) == pages(sdk, middle) == mine[1:]


def test_a_missing_table_raises_what_the_sdk_raises(store: TableStore, settings: Settings) -> None:
    service = TableServiceClient.from_connection_string(str(settings.storage_connection_string))
    mine = missing_table(store)
    raised = []
    for table in (mine, service.get_table_client("nosuchtable")):
        with pytest.raises(HttpResponseError) as caught:
            list(table.query_entities("PartitionKey eq @p", parameters={"p": "x"}))
        raised.append((type(caught.value), caught.value.status_code))
    assert raised[0] == raised[1] == (raised[1][0], 404)


def test_parameters_are_written_as_odata_literals() -> None:
    """Where the SDK's own substitution is wrong (0 and 1 written as booleans), numbers."""
    assert substitute({"a": 0, "b": 1, "c": False}, "A eq @a and B eq @b and C eq @c") == (
        "A eq 0 and B eq 1 and C eq false"
    )
    assert substitute({"x": 2**33}, "X eq @x") == "X eq 8589934592L"
    assert substitute(None, "X eq @x") == "X eq @x"
