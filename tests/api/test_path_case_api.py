"""ARM paths are case-insensitive (`resourcegroups`, `microsoft.scheduler`, `jobcollections`,
the action (`bulk`, `backfill`, `import`) and the names of collections and jobs), on the
2026-12-01 routes too, over real HTTP and Azurite: each request below is sent in a case no
route declares, and must be answered as its canonical spelling is. So is every other route
of the app (health, metrics, the preview, the docs, the dashboard and its files), as the
Functions host's routing is case-insensitive: the literals matched in any case are those of
every route the app serves (`api/middleware.RouteCase`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from importlib import resources

import httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import iter_route_contexts
from starlette.routing import BaseRoute, Mount, Route

from scheduler_lib.api import paths
from scheduler_lib.config import Settings
from scheduler_lib.metrics_settings import MetricsSettings
from scheduler_lib.runtime import create_web_app
from tests.api.conftest import RG, SUB, http_action, job_path, make_collection
from tests.support.api_server import ApiServer, ManualClock, serve

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
    `paths.ARM_PATHS`, the list of the ARM paths the routes serve."""
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


@pytest.fixture
def web_app(settings: Settings, clock: ManualClock) -> Iterator[tuple[FastAPI, ApiServer]]:
    """The app the Functions host serves (API and dashboard), with the metrics endpoint open
    (closed, it answers as an unknown route does), and its server."""
    opened = replace(settings, metrics=MetricsSettings(tokens=("metrics-token",)))
    app = create_web_app(opened, clock=clock)
    with serve(app) as running:
        yield app, running


def every_route(routes: list[BaseRoute], prefix: str = "") -> Iterator[tuple[str, str]]:
    """(method, path template) of each route, mounts' included; a mount of files as one of
    its files."""
    for context in iter_route_contexts(routes):  # an included router's routes, prefixed
        route = context.original_route
        if isinstance(route, Mount) and route.routes:
            yield from every_route(route.routes, prefix + route.path)
        elif isinstance(route, Mount):  # its files' names are names, not literals
            yield "GET", f"{prefix}{route.path}/{{file}}"
        elif isinstance(route, Route) and context.path:
            for method in sorted((context.methods or {"GET"}) - {"HEAD"}):
                yield method, prefix + context.path


STATIC = resources.files("scheduler_lib.dashboard").joinpath("static")
A_FILE = sorted(f.name for f in STATIC.iterdir() if f.is_file())[0]


def spelled(template: str, name: str, other_case: bool) -> str:
    """`template` with each parameter a made-up name (a static file's: a real one), and its
    literals in another case."""
    return "/".join(
        A_FILE if part == "{file}" else name if part.startswith("{") else
        part.swapcase() if other_case else part
        for part in template.split("/")
    )  # fmt: skip


def test_every_route_of_the_app_answers_in_another_case(web_app):
    """Each route of the app (the ARM ones, `/api/health`, `/api/metrics`, `/api/preview`,
    the OpenAPI documents and `/api/docs`, every dashboard page and its static files), its
    literals, `api` included, in another case (`/API/HEALTH`, `/API/UI/SIGNIN`): answered
    as the declared spelling is (the same status; a name the canonical request did not
    use, so that neither sees what the other did), never as an unknown route."""
    app, server = web_app
    routes = sorted(set(every_route(app.routes)))
    assert {"/api/health", "/api/metrics", "/api/preview", "/api/ui/signin"} <= {
        path for _, path in routes
    }
    headers = {"Authorization": "Bearer test-key"}
    params = {"api-version": "2026-12-01"}
    with httpx.Client(base_url=server.base_url, headers=headers, params=params) as http:
        for method, template in routes:
            declared = http.request(method, spelled(template, "one", False), json={})
            other = http.request(method, spelled(template, "two", True), json={})
            said = other.text[:200]
            assert other.status_code == declared.status_code, (method, template, said)
            assert other.status_code != 405 and "No such route" not in said, (method, template)
