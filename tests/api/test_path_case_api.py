"""ARM paths are case-insensitive (`resourcegroups`, `microsoft.scheduler`, `jobcollections`,
the action (`bulk`, `backfill`, `import`) and the names of collections and jobs), on the
2026-12-01 routes too, over real HTTP and Azurite: each request below is sent in a case no
route declares, and must be answered as its canonical spelling is. (The literals matched in
any case are those of `api/paths.ARM_PATHS`, through `middleware.canonical_path`.)"""

from __future__ import annotations

import httpx
import pytest

from scheduler_lib.api import paths
from tests.api.conftest import RG, SUB, http_action, job_path, make_collection

RECURRING = {"startTime": "2026-03-01T00:00:00Z", "recurrence": {"frequency": "Hour"}}


def shouted(path: str) -> str:
    """`path` with every literal segment and name in another case than it was created in."""
    return (
        path.replace("/subscriptions/", "/SUBSCRIPTIONS/")
        .replace("/resourceGroups/", "/resourcegroups/")
        .replace(f"/{RG}/", f"/{RG.upper()}/")
        .replace("/Microsoft.Scheduler/", "/microsoft.scheduler/")
        .replace("/jobCollections/", "/jobcollections/")
        .replace("/coll/", "/COLL/")
        .replace("/jobs/", "/Jobs/")
    )


COLLECTION = shouted(job_path("x")).rsplit("/Jobs/", 1)[0]


@pytest.fixture
def jobs(client_ext: httpx.Client) -> httpx.Client:
    """The collection `coll` with the jobs `job-a` (Enabled) and `job-b` (Disabled)."""
    make_collection(client_ext)
    for name, state in (("job-a", "Enabled"), ("job-b", "Disabled")):
        body = {"properties": {"action": http_action(), **RECURRING, "state": state}}
        assert client_ext.put(job_path(name), json=body).status_code == 201
    return client_ext


@pytest.mark.parametrize("action", ["BULK", "Bulk"])
def test_bulk_by_names_in_any_case_at_a_path_in_any_case(jobs, action):
    body = {"operation": "Disable", "names": ["JOB-A", "Job-B"]}
    response = jobs.post(f"{COLLECTION}/{action}", json=body)
    assert response.status_code == 200, response.text
    value = response.json()["value"]
    # The names answered are the jobs' own (as created), whatever case the body used.
    assert [(r["name"], r["outcome"]) for r in value] == [
        ("job-a", "Succeeded"), ("job-b", "Skipped")
    ]  # fmt: skip
    assert jobs.get(job_path("job-a")).json()["properties"]["state"] == "Disabled"


@pytest.mark.parametrize("action", ["BACKFILL", "Backfill"])
def test_backfill_at_a_path_in_any_case(jobs, action):
    body = {"from": "2026-03-02T00:30:00Z", "to": "2026-03-02T02:00:00Z"}
    response = jobs.post(f"{COLLECTION}/Jobs/JOB-A/{action}", json=body)
    assert response.status_code == 202, response.text
    assert len(response.json()["value"]) == 2


@pytest.mark.parametrize("action", ["IMPORT", "Import"])
def test_import_at_a_path_in_any_case(jobs, action):
    """An export of `coll` imported (dry run) into another resource group."""
    exported = jobs.get(f"{COLLECTION}/export").text
    body = {"files": [{"name": "coll.json", "content": exported}], "resourceGroup": "rg2"}
    path = f"/SUBSCRIPTIONS/{SUB}/PROVIDERS/microsoft.scheduler/{action}"
    response = jobs.post(path, json=body)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["dryRun"] is True and answer["succeeded"] is True, answer
    assert {(r.get("name"), r["outcome"]) for r in answer["value"]} == {
        (None, "would create"), ("job-a", "would create"), ("job-b", "would create")
    }  # fmt: skip


def test_every_documented_arm_route_is_in_paths_and_answers_in_any_case(server, client_ext):
    """Each ARM path of the 2026-12-01 document, its literals upper-cased and its names made
    up, sent with each of its methods: a route answers (a 404 for the missing resource,
    a 400 for the empty body), never the router's "No such route". And each is in
    `paths.ARM_PATHS`, whose literals are the ones matched in any case, so that a route
    added without it is caught here rather than by a client."""
    document = httpx.get(server.api_url + "/openapi-2026-12-01.json").json()
    documented = {p: ops for p, ops in document["paths"].items() if p.startswith("/api/subs")}
    assert set(documented) == set(paths.ARM_PATHS)
    names = {"subscriptionId": SUB, "resourceGroupName": "RG9", "jobCollectionName": "COLL9",
             "jobName": "JOB9"}  # fmt: skip
    for path, operations in sorted(documented.items()):
        sent = "/".join(
            names[p[1:-1]] if p.startswith("{") else p.upper() for p in path.split("/")
        ).removeprefix("/API")  # the client's base URL holds /api
        for method in operations:
            response = client_ext.request(method.upper(), sent, json={})
            code = response.json().get("error", {}).get("code") if response.content else None
            assert response.status_code != 405 and code != "NotFound", (method, sent, response.text)
