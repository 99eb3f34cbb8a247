"""Job collection operations over real HTTP against Azurite."""

from datetime import timedelta

from scheduler_lib.dispatch.tick import run_tick
from scheduler_lib.store.due_index import due_rows
from scheduler_lib.store.execution_queue import ExecutionQueue
from scheduler_lib.store.jobs import get_job
from scheduler_lib.store.tables import TableStore
from tests.api.conftest import (
    COLLECTIONS,
    RG,
    SUB,
    arm_error,
    collection_path,
    job_body,
    job_path,
    make_collection,
)


def test_create_get_replace_and_etag(client):
    created = client.put(
        collection_path("Coll"),
        json={
            "location": "westus",
            "tags": {"env": "test"},
            "properties": {"sku": {"name": "free"}},
        },
    )
    assert created.status_code == 201
    assert created.headers["etag"]
    assert created.json() == {
        "id": f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler"
        "/jobCollections/Coll",
        "type": "Microsoft.Scheduler/jobCollections",
        "name": "Coll",
        "location": "westus",
        "tags": {"env": "test"},
        "properties": {"sku": {"name": "Free"}, "state": "Enabled"},
    }
    got = client.get(collection_path("COLL"))  # ARM names are case-insensitive
    assert got.status_code == 200 and got.json() == created.json()
    assert got.headers["etag"] == created.headers["etag"]
    replaced = client.put(collection_path("coll"), json={"location": "eastus", "properties": {}})
    assert replaced.status_code == 201  # as Azure Scheduler answered a replace (2016-03-01)
    assert replaced.json()["name"] == "Coll"  # the creation spelling is kept
    assert replaced.json()["properties"]["sku"] == {"name": "Standard"}
    assert replaced.headers["etag"] != created.headers["etag"]


def test_patch_changes_only_what_is_given(client):
    make_collection(client, sku={"name": "Standard"}, quota={"maxJobCount": 10})
    patched = client.patch(
        collection_path(),
        json={"tags": {"a": "b"}, "properties": {"quota": {"maxJobOccurrence": 5}}},
    )
    assert patched.status_code == 200
    body = patched.json()
    assert body["location"] == "westus" and body["tags"] == {"a": "b"}
    assert body["properties"]["quota"] == {"maxJobCount": 10, "maxJobOccurrence": 5}
    arm_error(client.patch(collection_path("nope"), json={}), 404)


def test_enable_disable_answer_200_and_store_the_state(client):
    make_collection(client)
    disabled = client.post(collection_path() + "/disable")
    assert disabled.status_code == 200 and disabled.headers["etag"]
    assert client.get(collection_path()).json()["properties"]["state"] == "Disabled"
    assert client.post(collection_path() + "/enable").status_code == 200
    assert client.get(collection_path()).json()["properties"]["state"] == "Enabled"
    arm_error(client.post(collection_path("nope") + "/enable"), 404)


def test_list_by_resource_group_and_subscription(client):
    for name in ("b", "a"):
        make_collection(client, name)
    other_rg = COLLECTIONS.replace(f"/resourceGroups/{RG}/", "/resourceGroups/other/")
    assert client.put(other_rg + "/c", json={"properties": {}}).status_code == 201
    in_rg = client.get(COLLECTIONS).json()
    assert [c["name"] for c in in_rg["value"]] == ["a", "b"] and in_rg["nextLink"] is None
    in_sub = client.get(f"/subscriptions/{SUB}/providers/Microsoft.Scheduler/jobCollections")
    assert sorted(c["name"] for c in in_sub.json()["value"]) == ["a", "b", "c"]
    empty = client.get("/subscriptions/other-sub/providers/Microsoft.Scheduler/jobCollections")
    assert empty.json() == {"value": [], "nextLink": None}


def test_literal_path_segments_are_case_insensitive(client):
    make_collection(client)
    path = (
        collection_path()
        .replace("resourceGroups", "resourcegroups")
        .replace("Microsoft.Scheduler", "microsoft.scheduler")
    )
    assert client.get(path).status_code == 200


def test_delete_removes_the_collection_and_its_jobs(client, store):
    make_collection(client)
    assert client.put(job_path("j1"), json=job_body()).status_code == 201
    deleted = client.delete(collection_path())
    assert deleted.status_code == 200
    arm_error(client.get(collection_path()), 404)
    arm_error(client.get(job_path("j1")), 404)
    assert client.put(collection_path(), json={"properties": {}}).status_code == 201
    arm_error(client.get(job_path("j1")), 404)  # a re-created collection starts empty
    arm_error(client.delete(collection_path("nope")), 404)
    try:
        get_job(store, SUB, RG, "coll", "j1")
        raise AssertionError("the job entity survived its collection")
    except Exception as exc:  # NotFoundError
        assert type(exc).__name__ == "NotFoundError"


def test_quota_may_not_exceed_the_sku(client):
    error = arm_error(
        client.put(
            collection_path(),
            json={"properties": {"sku": {"name": "Free"}, "quota": {"maxJobCount": 6}}},
        ),
        400,
    )
    assert error["target"] == "properties.quota.maxJobCount"


def test_downgrade_refused_while_jobs_would_break_it(client):
    make_collection(client, sku={"name": "Standard"})
    for index in range(6):
        assert client.put(job_path(f"j{index}"), json=job_body()).status_code == 201
    error = arm_error(
        client.patch(collection_path(), json={"properties": {"sku": {"name": "Free"}}}), 409
    )
    assert error["code"] == "QuotaExceeded"
    client.delete(job_path("j0"))
    client.put(
        job_path("j1"),
        json=job_body(
            action={
                "type": "Http",
                "request": {
                    "uri": "http://x.y",
                    "method": "GET",
                    "authentication": {"type": "Basic", "username": "u", "password": "p"},
                },
            }
        ),
    )
    error = arm_error(
        client.patch(collection_path(), json={"properties": {"sku": {"name": "Free"}}}), 409
    )
    assert "authentication" in error["message"]


def test_jobs_run_again_after_their_collection_is_enabled(client, clock, settings):
    """While the collection is disabled a tick drops the job's due row; enabling the
    collection must reschedule the job from now (missed occurrences are not run)."""
    store, queue = TableStore(settings), ExecutionQueue(settings)
    make_collection(client)
    client.put(
        job_path(),
        json=job_body(startTime="2026-03-04T09:10:00Z", recurrence={"frequency": "Hour"}),
    )
    client.post(collection_path() + "/disable")
    clock.advance(timedelta(minutes=10))  # 09:10: due, but the collection is disabled
    report = run_tick(store, queue, settings, now=clock())
    assert (report.messages_sent, report.stale_dropped) == (0, 1)
    window = {"start": clock() - timedelta(days=1), "through": clock() + timedelta(days=1)}
    assert list(due_rows(store, **window)) == []

    clock.advance(timedelta(minutes=20))  # 09:30
    assert client.post(collection_path() + "/enable").status_code == 200
    job = client.get(job_path()).json()["properties"]
    assert job["status"]["nextExecutionTime"] == "2026-03-04T10:10:00Z"
    assert [row.due.isoformat() for row in due_rows(store, **window)] == [
        "2026-03-04T10:10:00+00:00"
    ]
