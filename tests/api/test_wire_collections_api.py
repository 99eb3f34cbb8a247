"""How job collection answers look in each api-version (`wire/dialect.py`), and the
Suspended state, over real HTTP. Bodies as the .NET SDK 2.x sends them."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from scheduler_lib.dispatch.tick import run_tick
from scheduler_lib.store.due_index import due_rows
from scheduler_lib.store.execution_queue import ExecutionQueue
from scheduler_lib.store.tables import TableStore
from tests.api.conftest import (
    COLLECTIONS,
    SUB,
    arm_error,
    collection_path,
    job_body,
    job_path,
    make_collection,
)


def _dotnet_collection(state: str = "Enabled", **extra: Any) -> dict[str, Any]:
    return {
        "name": "coll",
        "location": "South Central US",
        "properties": {
            "sku": {"name": "Standard"},
            "state": state,
            "quota": {"maxJobCount": 20, "maxRecurrence": {"frequency": "Week", "interval": 1}},
        },
        **extra,
    }


def test_a_suspended_collection_is_accepted_and_answered(client, client_ext) -> None:
    created = client.put(collection_path(), json=_dotnet_collection("Suspended"))
    assert created.status_code == 201, created.text
    assert created.json()["properties"]["state"] == "Suspended"
    for api in (client, client_ext):
        assert api.get(collection_path()).json()["properties"]["state"] == "Suspended"
    enabled = client.patch(collection_path(), json={"properties": {"state": "enabled"}})
    assert enabled.json()["properties"]["state"] == "Enabled"
    suspended = client_ext.patch(collection_path(), json={"properties": {"state": "SUSPENDED"}})
    assert suspended.status_code == 200 and suspended.json()["properties"]["state"] == "Suspended"
    error = arm_error(client.put(collection_path(), json=_dotnet_collection("Deleted")), 400)
    assert error["target"] == "properties.state"


@pytest.mark.parametrize(
    "stop",
    [
        pytest.param({"properties": {"state": "Suspended"}}, id="suspended"),
        pytest.param({"properties": {"state": "Disabled"}}, id="disabled"),
    ],
)
def test_a_suspended_collection_runs_nothing_until_enabled(client, clock, settings, stop):
    """Suspended stops a collection's jobs as Disabled does (the one `enabled` predicate the
    dispatcher and executor ask); set back to Enabled, its jobs resume from now."""
    store, queue = TableStore(settings), ExecutionQueue(settings)
    make_collection(client)
    body = job_body(startTime="2026-03-04T09:10:00Z", recurrence={"frequency": "Hour"})
    assert client.put(job_path(), json=body).status_code == 201
    assert client.patch(collection_path(), json=stop).status_code == 200
    clock.advance(timedelta(minutes=10))  # 09:10: due, but the collection does not run
    report = run_tick(store, queue, settings, now=clock())
    assert (report.messages_sent, report.stale_dropped) == (0, 1)
    assert client.get(job_path()).json()["properties"]["state"] == "enabled"  # jobs untouched

    clock.advance(timedelta(minutes=20))  # 09:30
    patch = {"properties": {"state": "Enabled"}}
    assert client.patch(collection_path(), json=patch).status_code == 200
    job = client.get(job_path()).json()["properties"]
    assert job["status"]["nextExecutionTime"] == "2026-03-04T10:10:00Z"
    window = {"start": clock() - timedelta(days=1), "through": clock() + timedelta(days=1)}
    assert [row.due.isoformat() for row in due_rows(store, **window)] == [
        "2026-03-04T10:10:00+00:00"
    ]


def test_collection_answers_in_2016(client) -> None:
    created = client.put(collection_path(), json=_dotnet_collection())
    assert created.status_code == 201
    assert created.json() == {
        "id": f"{COLLECTIONS}/coll",
        "type": "Microsoft.Scheduler/jobCollections",
        "name": "coll",
        "location": "South Central US",
        "properties": {
            "sku": {"name": "Standard"},
            "state": "Enabled",
            "quota": {"maxJobCount": 20, "maxRecurrence": {"frequency": "week", "interval": 1}},
        },
    }
    replaced = client.put(collection_path(), json=_dotnet_collection(tags={"a": "b"}))
    assert replaced.status_code == 201  # as Azure Scheduler answered an update
    assert replaced.json()["tags"] == {"a": "b"}
    listed = client.get(COLLECTIONS).json()
    assert listed["nextLink"] is None and [c["name"] for c in listed["value"]] == ["coll"]
    everywhere = client.get(f"/subscriptions/{SUB}/providers/Microsoft.Scheduler/jobCollections")
    assert everywhere.json()["nextLink"] is None


def test_collection_answers_in_2026(client_ext) -> None:
    assert client_ext.put(collection_path(), json=_dotnet_collection()).status_code == 201
    replaced = client_ext.put(collection_path(), json=_dotnet_collection())
    assert replaced.status_code == 200
    body = replaced.json()
    assert body["tags"] == {}
    assert body["properties"]["quota"]["maxRecurrence"] == {"frequency": "Week", "interval": 1}
    assert "nextLink" not in client_ext.get(COLLECTIONS).json()
