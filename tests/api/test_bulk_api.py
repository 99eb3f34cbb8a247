"""`POST .../jobCollections/{c}/bulk` (api-version 2026-12-01) over real HTTP and Azurite:
enable, disable, run and delete by names, by tag and by filter; each job's own outcome
(Succeeded, Skipped, NotFound, Failed), never all-or-nothing; the bounds and bad input as
ARM 400s naming the field; 2016-03-01 refused; no secret in any answer."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import httpx
import pytest

from scheduler_lib.config import Settings
from scheduler_lib.domain import JobState
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution import ExecutionQueue
from scheduler_lib.service import bulk as bulk_service
from scheduler_lib.store import jobs as job_store
from scheduler_lib.store.history_purge import pending_history_purges
from scheduler_lib.store.tables import TableStore
from tests.api.conftest import (
    EXTENSIONS_VERSION,
    RG,
    SUB,
    api_client,
    arm_error,
    collection_path,
    http_action,
    job_path,
    make_collection,
)

RECURRING = {"startTime": "2026-03-04T10:00:00Z", "recurrence": {"frequency": "Hour"}}


def put_job(http: httpx.Client, name: str, **properties: Any) -> None:
    body = {"properties": {"action": http_action(), **RECURRING, **properties}}
    response = http.put(job_path(name), json=body)
    assert response.status_code == 201, response.text


def bulk(http: httpx.Client, body: Any, collection: str = "coll") -> dict[str, Any]:
    response = http.post(collection_path(collection) + "/bulk", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def outcomes(answer: dict[str, Any]) -> dict[str, str]:
    return {r["name"]: r["outcome"] for r in answer["value"]}


def state(http: httpx.Client, name: str) -> str:
    return http.get(job_path(name)).json()["properties"]["state"]


@pytest.fixture
def jobs(client_ext: httpx.Client) -> httpx.Client:
    """prod-a (Enabled), prod-b (Disabled), dev-c (Enabled): tagged env=prod/prod/dev."""
    make_collection(client_ext)
    put_job(client_ext, "prod-a", tags={"env": "prod", "team": "x"})
    put_job(client_ext, "prod-b", tags={"env": "prod"}, state="Disabled")
    put_job(client_ext, "dev-c", tags={"Env": "dev"})
    return client_ext


def test_the_old_version_has_no_bulk_route(client, client_ext):
    make_collection(client)
    body = {"operation": "Disable", "names": ["a"]}
    error = arm_error(client.post(collection_path() + "/bulk", json=body), 400)
    assert error["target"] == "api-version" and "2026-12-01" in error["message"]


def test_disable_by_names_reports_each_job(jobs):
    answer = bulk(jobs, {"operation": "Disable", "names": ["prod-a", "prod-b", "ghost"]})
    assert answer["value"][0] == {"name": "prod-a", "outcome": "Succeeded", "state": "Disabled"}
    assert answer["value"][1] == {
        "name": "prod-b", "outcome": "Skipped", "state": "Disabled", "message": "already Disabled"
    }  # fmt: skip
    ghost = answer["value"][2]
    assert (ghost["name"], ghost["outcome"], ghost["error"]["code"]) == (
        "ghost", "NotFound", "ResourceNotFound"
    )  # fmt: skip
    assert answer["summary"] == {"Succeeded": 1, "Skipped": 1, "NotFound": 1, "Failed": 0}
    assert [state(jobs, n) for n in ("prod-a", "prod-b", "dev-c")] == [
        "Disabled", "Disabled", "Enabled"
    ]  # fmt: skip


def test_enable_by_tag_name_and_value_then_by_name_alone_in_any_case(jobs):
    answer = bulk(jobs, {"operation": "Enable", "tag": {"name": "env", "value": "prod"}})
    assert outcomes(answer) == {"prod-a": "Skipped", "prod-b": "Succeeded"}
    assert state(jobs, "prod-b") == "Enabled"
    answer = bulk(jobs, {"operation": "Disable", "tag": {"name": "ENV"}})
    assert outcomes(answer) == {"dev-c": "Succeeded", "prod-a": "Succeeded", "prod-b": "Succeeded"}
    assert list(outcomes(answer)) == ["dev-c", "prod-a", "prod-b"]  # by name
    assert (
        bulk(jobs, {"operation": "Enable", "tag": {"name": "env", "value": "PROD"}})["value"] == []
    )  # values match exactly


def test_enable_by_filter_on_state_and_tag(jobs):
    answer = bulk(jobs, {"operation": "Enable", "filter": "state eq 'Disabled'"})
    assert outcomes(answer) == {"prod-b": "Succeeded"}
    text = "state eq 'Enabled' and tagName eq 'env' and tagValue eq 'dev'"
    answer = bulk(jobs, {"operation": "Disable", "filter": text})
    assert outcomes(answer) == {"dev-c": "Succeeded"}
    assert state(jobs, "dev-c") == "Disabled"


def test_run_now_by_names_queues_one_manual_run_each(jobs, settings: Settings):
    answer = bulk(jobs, {"operation": "Run", "names": ["prod-a", "ghost", "dev-c"]})
    assert outcomes(answer) == {"prod-a": "Succeeded", "ghost": "NotFound", "dev-c": "Succeeded"}
    received = ExecutionQueue(settings).receive(max_messages=10)
    messages = [ExecutionMessage.from_json(m.body) for m in received]
    assert sorted(m.job_key.rsplit("|", 1)[-1] for m in messages) == ["dev-c", "prod-a"]
    assert all(m.manual for m in messages)


def test_run_by_tag_runs_a_disabled_job_as_the_single_run_does(jobs, settings: Settings):
    answer = bulk(jobs, {"operation": "Run", "tag": {"name": "env", "value": "prod"}})
    assert outcomes(answer) == {"prod-a": "Succeeded", "prod-b": "Succeeded"}
    assert len(ExecutionQueue(settings).receive(max_messages=10)) == 2


def test_delete_by_filter_deletes_and_purges_as_the_single_delete(jobs, store: TableStore):
    doomed = job_store.get_job(store, SUB, RG, "coll", "prod-b")
    answer = bulk(
        jobs, {"operation": "Delete", "filter": "tagName eq 'env' and tagValue eq 'prod'"}
    )
    assert outcomes(answer) == {"prod-a": "Succeeded", "prod-b": "Succeeded"}
    assert arm_error(jobs.get(job_path("prod-a")), 404)["code"] == "ResourceNotFound"
    assert doomed.history_key in pending_history_purges(store)
    listed = jobs.get(collection_path() + "/jobs").json()["value"]
    assert [j["name"] for j in listed] == ["coll/dev-c"]
    again = bulk(jobs, {"operation": "Delete", "names": ["prod-a", "dev-c"]})
    assert outcomes(again) == {"prod-a": "NotFound", "dev-c": "Succeeded"}


def test_a_job_that_cannot_change_fails_alone(jobs, store: TableStore):
    """A Completed job can only be deleted: its Enable fails with the single PATCH's 409
    error, the others in the same request still change."""
    record = job_store.get_job(store, SUB, RG, "coll", "prod-b")
    completed = replace(record, state=JobState.COMPLETED, next_execution_time=None)
    job_store.put_job(store, completed, etag=record.etag)
    answer = bulk(jobs, {"operation": "Disable", "names": ["prod-b", "prod-a"]})
    failed, done = answer["value"]
    assert failed["outcome"] == "Failed" and failed["error"]["code"] == "Conflict"
    assert "Completed" in failed["error"]["message"]
    assert done == {"name": "prod-a", "outcome": "Succeeded", "state": "Disabled"}


def test_no_answer_holds_a_secret(client_ext, store: TableStore):
    make_collection(client_ext)
    auth = {"type": "Basic", "username": "u", "password": "basic-pw"}
    body = {"properties": {"action": http_action(authentication=auth), **RECURRING}}
    assert client_ext.put(job_path("secret"), json=body).status_code == 201
    for operation in ("Disable", "Enable", "Run"):
        response = client_ext.post(
            collection_path() + "/bulk", json={"operation": operation, "names": ["secret"]}
        )
        assert response.status_code == 200 and "basic-pw" not in response.text
        assert outcomes(response.json()) == {"secret": "Succeeded"}
    stored = job_store.get_job(store, SUB, RG, "coll", "secret")
    auth = stored.definition.document["action"]["request"]["authentication"]
    assert auth["password"] == "basic-pw"


@pytest.mark.parametrize(
    "body, target, words",
    [
        ({"names": ["a"]}, "operation", "required"),
        ({"operation": "Pause", "names": ["a"]}, "operation", "Enable"),
        ({"operation": "Run"}, "names", "exactly one"),
        ({"operation": "Run", "names": ["a"], "tag": {"name": "x"}}, "tag", "exactly one"),
        ({"operation": "Run", "names": []}, "names", "non-empty"),
        ({"operation": "Run", "names": "a"}, "names", "list"),
        ({"operation": "Run", "names": [f"j{i}" for i in range(101)]}, "names", "at most 100"),
        ({"operation": "Run", "names": ["a", "A"]}, "names[1]", "twice"),
        ({"operation": "Run", "names": ["a", 7]}, "names[1]", "string"),
        ({"operation": "Run", "tag": {"value": "x"}}, "tag.name", "required"),
        ({"operation": "Run", "tag": {"name": "x", "colour": "y"}}, "tag.colour", "known"),
        ({"operation": "Run", "filter": "name eq 'x'"}, "filter", "state, tagName"),
        ({"operation": "Run", "filter": "tagValue eq 'x'"}, "filter", "needs tagName"),
        ({"operation": "Run", "filter": "state eq 'Sleeping'"}, "filter", "Enabled"),
        ({"operation": "Run", "filter": "  "}, "filter", "select"),
        ({"operation": "Run", "names": ["a"], "extra": 1}, "extra", "known"),
        ([1, 2], "body", "object"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(jobs, body, target, words):
    error = arm_error(jobs.post(collection_path() + "/bulk", json=body), 400)
    assert error.get("target", "") == target and words in error["message"], error
    assert state(jobs, "prod-a") == "Enabled"  # nothing changed


def test_the_names_jobs_list_answers_select_their_jobs(jobs):
    """Jobs_List names a job `coll/prod-a` (the ARM name of a nested resource): a client
    that lists jobs and sends those names acts on the jobs, in any case of the collection,
    and is answered with the jobs' own names."""
    listed = jobs.get(collection_path() + "/jobs").json()["value"]
    names = sorted(job["name"] for job in listed)
    assert names == ["coll/dev-c", "coll/prod-a", "coll/prod-b"]
    answer = bulk(jobs, {"operation": "Disable", "names": [*names[:2], "COLL/prod-b"]})
    assert outcomes(answer) == {"dev-c": "Succeeded", "prod-a": "Succeeded", "prod-b": "Skipped"}
    assert state(jobs, "dev-c") == state(jobs, "prod-a") == "Disabled"


@pytest.mark.parametrize(
    ("names", "target", "words"),
    [
        (["prod-a", "other/prod-b"], "names[1]", "collection 'coll'"),
        (["coll/prod-a/run"], "names[0]", "collection/job"),
        (["coll/"], "names[0]", "collection/job"),
        (["/prod-a"], "names[0]", "collection 'coll'"),
        (["prod-a", "Coll/PROD-A"], "names[1]", "twice"),
    ],
)
def test_a_name_of_another_collection_is_a_400_naming_it(jobs, names, target, words):
    body = {"operation": "Disable", "names": names}
    error = arm_error(jobs.post(collection_path() + "/bulk", json=body), 400)
    assert error.get("target", "") == target and words in error["message"], error
    assert state(jobs, "prod-a") == "Enabled"  # nothing changed


def test_a_selection_over_the_bound_changes_nothing(jobs, monkeypatch):
    """The bound is checked on what a tag or filter matches, before any job changes (set
    to 1 here so that two matching jobs exceed it; the 100 of the real bound: names above)."""
    monkeypatch.setattr(bulk_service, "MAX_JOBS", 1)
    body = {"operation": "Disable", "tag": {"name": "env", "value": "prod"}}
    error = arm_error(jobs.post(collection_path() + "/bulk", json=body), 400)
    assert error["target"] == "tag" and "selects 2 jobs" in error["message"]
    assert state(jobs, "prod-a") == "Enabled"


def test_an_unknown_collection_is_a_404(client_ext):
    body = {"operation": "Run", "names": ["a"]}
    error = arm_error(client_ext.post(collection_path("nope") + "/bulk", json=body), 404)
    assert error["code"] == "ResourceNotFound"


def test_the_route_is_documented_by_the_new_version_alone(server):
    old = httpx.get(server.api_url + "/openapi.json").json()
    new = httpx.get(server.api_url + "/openapi-2026-12-01.json").json()
    path = "/api" + collection_path().replace("coll", "{jobCollectionName}")
    path = path.replace(SUB, "{subscriptionId}").replace(RG, "{resourceGroupName}") + "/bulk"
    assert path not in old["paths"]
    operation = new["paths"][path]["post"]
    assert operation["operationId"] == "Jobs_Bulk"
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    assert body["properties"]["operation"]["enum"] == ["Enable", "Disable", "Run", "Delete"]
    assert body["properties"]["names"]["maxItems"] == 100
    answer = operation["responses"]["200"]["content"]["application/json"]["schema"]
    outcome = answer["properties"]["value"]["items"]["properties"]["outcome"]
    assert outcome["enum"] == ["Succeeded", "Skipped", "NotFound", "Failed"]
    tags = new["components"]["schemas"]["JobProperties"]["properties"]["tags"]
    assert tags["maxProperties"] == 50
    assert "tags" not in old["components"]["schemas"]["JobProperties"]["properties"]


def test_bulk_changes_racing_patches_lose_nothing(client_ext, server):
    """Bulk Disable/Enable of two jobs while other clients PATCH a tag onto each: every write
    is the single PATCH's ETag-conditional read-modify-write (retried when it loses), so
    every tag lands and each job ends in the state of the last bulk request."""
    make_collection(client_ext)
    for name in ("a", "b"):
        put_job(client_ext, name)
    tags = [f"t{i}" for i in range(6)]

    def work(step: int) -> int:
        with api_client(server, version=EXTENSIONS_VERSION) as http:
            if step % 2:
                body = {"operation": "Disable" if step % 4 == 1 else "Enable", "names": ["a", "b"]}
                answer = http.post(collection_path() + "/bulk", json=body)
                assert {r["outcome"] for r in answer.json()["value"]} <= {"Succeeded", "Skipped"}
                return answer.status_code
            tag = {"properties": {"tags": {tags[step // 2]: "1"}}}
            statuses = {http.patch(job_path(name), json=tag).status_code for name in ("a", "b")}
            return statuses.pop() if len(statuses) == 1 else 0

    with ThreadPoolExecutor(max_workers=6) as pool:
        assert set(pool.map(work, range(12))) == {200}
    bulk(client_ext, {"operation": "Disable", "names": ["a", "b"]})
    for name in ("a", "b"):
        properties = client_ext.get(job_path(name)).json()["properties"]
        assert sorted(properties["tags"]) == tags and properties["state"] == "Disabled"
