"""Job collections round-trip through real Table storage (Azurite)."""

import pytest

from scheduler_lib.domain.collections import CollectionRecord
from scheduler_lib.errors import ConflictError, NotFoundError, PreconditionFailedError
from scheduler_lib.store.collections import (
    delete_collection,
    get_collection,
    list_collections,
    put_collection,
)
from scheduler_lib.store.tables import TableStore


def _record(rg: str, name: str, sub: str = "Sub-1") -> CollectionRecord:
    return CollectionRecord(
        subscription_id=sub,
        resource_group=rg,
        name=name,
        location="westeurope",
        tags={"team": "ops"},
        properties={"sku": {"name": "Standard"}, "state": "Enabled"},
    )


def test_round_trip_keeps_spelling_and_finds_any_case(store: TableStore) -> None:
    saved = put_collection(store, _record("My-RG", "Nightly"))
    assert saved.etag
    got = get_collection(store, "sub-1", "my-rg", "NIGHTLY")
    assert (got.subscription_id, got.resource_group, got.name) == ("Sub-1", "My-RG", "Nightly")
    assert got.tags == {"team": "ops"} and got.properties["sku"] == {"name": "Standard"}
    assert got.etag == saved.etag


def test_list_by_resource_group_is_a_range_not_a_prefix_match(store: TableStore) -> None:
    for rg, name in [("rg", "a"), ("rg", "b"), ("rg2", "c"), ("other", "d")]:
        put_collection(store, _record(rg, name))
    put_collection(store, _record("rg", "z", sub="sub-2"))
    assert [c.name for c in list_collections(store, "SUB-1", "RG")] == ["a", "b"]
    assert sorted(c.name for c in list_collections(store, "sub-1")) == ["a", "b", "c", "d"]


def test_create_only_refuses_an_existing_collection(store: TableStore) -> None:
    put_collection(store, _record("rg", "a"), create_only=True)
    with pytest.raises(ConflictError):
        put_collection(store, _record("RG", "A"), create_only=True)


def test_stale_etag_is_refused(store: TableStore) -> None:
    first = put_collection(store, _record("rg", "a"))
    put_collection(store, _record("rg", "a"), etag=first.etag)
    with pytest.raises(PreconditionFailedError):
        put_collection(store, _record("rg", "a"), etag=first.etag)
    with pytest.raises(PreconditionFailedError):
        delete_collection(store, first, etag=first.etag)


def test_delete_then_get_is_not_found(store: TableStore) -> None:
    saved = put_collection(store, _record("rg", "a"))
    delete_collection(store, saved)
    with pytest.raises(NotFoundError):
        get_collection(store, "sub-1", "rg", "a")
