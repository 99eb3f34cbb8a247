"""Extension 2 (concurrencyPolicy) through the API, real HTTP: validated, stored, returned by
2026-12-01 only, refused by 2016-03-01; and a `Skipped` history entry as 2016-03-01 clients
see it: listed as "Skipped" (the real SDK keeps an unknown enum value as its string), the
old filters unchanged. The executor's side: tests/execution/test_overlap.py."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from scheduler_lib.store.history import HistoryEntry, add_history
from scheduler_lib.store.jobs import get_job
from tests.api.conftest import RG, SUB, arm_error, job_body, job_path, make_collection
from tests.api.test_sdk import _collection, _http_job, sdk  # noqa: F401 (the fixture)

T = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)


@pytest.fixture
def coll(client):
    make_collection(client)


def test_the_policy_is_stored_and_returned_by_the_new_version(client, client_ext, coll):
    created = client_ext.put(job_path(), json=job_body(concurrencyPolicy="bufferone"))
    assert created.status_code == 201, created.text
    assert created.json()["properties"]["concurrencyPolicy"] == "BufferOne"
    assert "concurrencyPolicy" not in client.get(job_path()).json()["properties"]
    error = arm_error(client.put(job_path(), json=job_body(concurrencyPolicy="Forbid")), 400)
    assert error["target"] == "properties.concurrencyPolicy"
    assert "not a known property" in error["message"]


@pytest.mark.parametrize("value", ["Replace", "", 1, None])
def test_bad_values_are_refused_naming_the_field(client_ext, coll, value):
    body = job_body(concurrencyPolicy=value)
    if value is None:  # null is "not given": the default, Allow
        assert client_ext.put(job_path(), json=body).status_code == 201
        return
    error = arm_error(client_ext.put(job_path(), json=body), 400)
    assert error["target"] == "properties.concurrencyPolicy"
    assert "Allow, Forbid, BufferOne" in error["message"]


def _skipped(history_key: str) -> HistoryEntry:
    return HistoryEntry(
        history_key, T, T, T, "MainAction", "Skipped",
        "Skipped the occurrence due at 2026-03-04T09:00:00Z: the previous occurrence was "
        "still running and concurrencyPolicy is Forbid.", 0, 2,
    )  # fmt: skip


def test_a_skipped_entry_is_listed_by_both_versions_and_filters_keep_working(
    client, client_ext, coll, store
):
    assert client_ext.put(job_path(), json=job_body(concurrencyPolicy="Forbid")).status_code == 201
    record = get_job(store, SUB, RG, "coll", "job1")
    add_history(store, _skipped(record.history_key))
    for http in (client, client_ext):
        [entry] = http.get(job_path() + "/history").json()["value"]
        assert entry["properties"]["status"] == "Skipped"
        failed = http.get(job_path() + "/history", params={"$filter": "status eq Failed"})
        assert failed.status_code == 200 and failed.json()["value"] == []
        only = http.get(job_path() + "/history", params={"$filter": "status eq Skipped"})
        assert [e["properties"]["status"] for e in only.json()["value"]] == ["Skipped"]


def test_the_old_sdk_lists_a_skipped_entry_as_its_string(sdk, store):  # noqa: F811
    sdk.job_collections.create_or_update(RG, "sdkcoll", _collection())
    sdk.jobs.create_or_update(RG, "sdkcoll", "hook", _http_job())
    add_history(store, _skipped(get_job(store, SUB, RG, "sdkcoll", "hook").history_key))
    [entry] = list(sdk.jobs.list_job_history(RG, "sdkcoll", "hook"))
    assert entry.properties.status == "Skipped"
    assert entry.properties.action_name == "MainAction"
    assert "still running" in entry.properties.message
    assert list(sdk.jobs.list_job_history(RG, "sdkcoll", "hook", filter="status eq Failed")) == []
