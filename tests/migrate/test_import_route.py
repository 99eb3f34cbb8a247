"""`POST .../subscriptions/{s}/providers/Microsoft.Scheduler/import` (api-version 2026-12-01)
over real HTTP and Azurite: the fixtures uploaded as files, a dry run that lists each job
with its next runs and writes nothing, an apply that creates them (read back through the
API), a second apply unchanged, a conflict left alone unless `replace`, a job whose secret is
only referenced imported Disabled; 2016-03-01 refused, bad input 400 naming the field, and no
secret in any answer."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.conftest import api_client, arm_error
from tests.migrate.conftest import FIXTURES, SUB, next_runs, path
from tests.migrate.test_fixtures import EVERY_MINUTE, SB_KEY_NAME, WEBAPP_RUNS, WEBAPP_URI
from tests.support.api_server import ApiServer

IMPORT = f"/subscriptions/{SUB}/providers/Microsoft.Scheduler/import"
TERRAFORM = FIXTURES / "terraform" / "scheduler-jobs"
TF_GROUP, TF_COLL = "tfex-job_collection", "tfex-scheduler-job-collection"


@pytest.fixture
def ext(server: ApiServer) -> Iterator[httpx.Client]:
    with api_client(server, version="2026-12-01") as http:
        yield http


def files(*paths: Path) -> list[dict[str, str]]:
    return [{"name": p.name, "content": p.read_text(encoding="utf-8")} for p in paths]


def terraform() -> list[dict[str, str]]:
    return files(*sorted(TERRAFORM.glob("*.tf")))


def webapp(**body: Any) -> dict[str, Any]:
    return {
        "files": files(FIXTURES / "arm" / "scheduler-webapp" / "azuredeploy.json"),
        "resourceGroup": "rg1",
        "location": "westus",
        "set": {"jobCollectionName": "webjobs", "jobName": "ping",
                WEBAPP_URI: "http://ping.example.com"},
        **body,
    }  # fmt: skip


def answer(http: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    response = http.post(IMPORT, json=body)
    assert response.status_code == 200, response.text
    return response.json()


def outcomes(result: dict[str, Any]) -> dict[str, str]:
    return {item.get("name") or item["jobCollection"]: item["outcome"] for item in result["value"]}


def test_dry_run_lists_jobs_with_next_runs_and_writes_nothing(ext, client) -> None:
    dry = answer(ext, webapp())
    assert dry["dryRun"] is True and dry["succeeded"] is True
    assert outcomes(dry) == {"webjobs": "would create", "ping": "would create"}
    job = next(item for item in dry["value"] if item["type"] == "job")
    assert job["nextRuns"] == WEBAPP_RUNS
    assert job["state"] == "Enabled" and job["resourceGroup"] == "rg1"
    assert client.get(path("rg1", "webjobs")).status_code == 404  # nothing written

    tf = answer(ext, {"files": terraform()})
    assert tf["value"][0] == {**tf["value"][0], "type": "jobCollection", "outcome": "would create"}
    recurring = next(item for item in tf["value"] if item.get("name") == "tfex-web-recurring")
    assert recurring["nextRuns"] == [f"2026-03-02T09:{m}7:07Z" for m in "01234"]
    assert client.get(path(TF_GROUP, TF_COLL)).status_code == 404
    assert "apassword" not in str(tf)  # a Basic password of the source, never answered


def test_apply_creates_then_unchanged(ext, client) -> None:
    applied = answer(ext, webapp(dryRun=False))
    assert outcomes(applied) == {"webjobs": "created", "ping": "created"}
    job = client.get(path("rg1", "webjobs", "ping")).json()
    assert job["properties"]["action"]["request"] == {
        "uri": "http://ping.example.com", "method": "GET"
    }  # fmt: skip
    assert next_runs(client, job) == WEBAPP_RUNS

    again = answer(ext, webapp(dryRun=False))
    assert outcomes(again) == {"webjobs": "unchanged", "ping": "unchanged"}
    assert client.get(path("rg1", "webjobs", "ping")).json() == job


def test_conflict_left_alone_unless_replace(ext, client) -> None:
    assert answer(ext, {"files": terraform(), "dryRun": False})["succeeded"] is True
    address = path(TF_GROUP, TF_COLL, "tfex-web-recurring")
    changed = {"properties": {"action": {"request": {"uri": "http://other.example.com"}}}}
    assert client.patch(address, json=changed).status_code == 200

    conflict = answer(ext, {"files": terraform(), "dryRun": False})
    assert conflict["succeeded"] is False
    item = next(i for i in conflict["value"] if i.get("name") == "tfex-web-recurring")
    assert item["outcome"].startswith("conflict")
    assert (
        "properties.action.request.uri: 'http://other.example.com' here, 'http://example.com' "
        "in the source"
    ) in item["details"]
    uri = lambda: client.get(address).json()["properties"]["action"]["request"]["uri"]  # noqa: E731
    assert uri() == "http://other.example.com"

    replaced = answer(ext, {"files": terraform(), "dryRun": False, "replace": True})
    assert outcomes(replaced)["tfex-web-recurring"] == "replaced"
    assert uri() == "http://example.com"


def test_a_referenced_secret_imports_disabled(ext, client) -> None:
    folder = FIXTURES / "arm" / "scheduler-service-bus"
    body = {
        "files": files(folder / "azuredeploy.json", folder / "azuredeploy.parameters.json"),
        "resourceGroup": "rg2", "location": "westus", "set": {SB_KEY_NAME: "Scheduler"},
        "dryRun": False,
    }  # fmt: skip
    result = answer(ext, body)
    job = next(item for item in result["value"] if item["type"] == "job")
    assert job["outcome"] == "created" and job["state"] == "Disabled"
    assert any(n.startswith("missing secret: properties.action.serviceBusQueueMessage")
               for n in job["notes"])  # fmt: skip
    stored = ext.get(path("rg2", "QueuePoster", "PostMessage")).json()["properties"]
    assert stored["state"] == "Disabled" and stored["pauseNote"].startswith("Imported Disabled")
    assert next_runs(client, {"properties": stored}) == EVERY_MINUTE


def test_2016_is_refused(server: ApiServer) -> None:
    with api_client(server) as old:  # 2016-03-01
        error = arm_error(old.post(IMPORT, json=webapp()), 400)
    assert error["target"] == "api-version" and "2026-12-01" in error["message"]


@pytest.mark.parametrize(
    ("body", "target"),
    [
        ([], "body"),
        ({"files": []}, "files"),
        ({"files": [{"name": "a.json"}]}, "files[0]"),
        ({"files": [{"name": "a.json", "content": 1}]}, "files[0].content"),
        ({"files": [{"name": "../a.json", "content": "{}"}]}, "files[0].name"),
        ({"files": [{"name": "a.exe", "content": "{}"}]}, "files[0].name"),
        ({"files": [{"name": "a.json", "content": "x" * 600_000}]}, "files[0].content"),
        ({"files": [{"name": "a.json", "content": "{}"}], "dryRun": "yes"}, "dryRun"),
        ({"files": [{"name": "a.json", "content": "{}"}], "set": ["a=b"]}, "set"),
        ({"files": [{"name": "a.json", "content": "{}"}], "extra": 1}, "extra"),
        ({"files": [{"name": "a.json", "content": "{not json"}]}, "files"),
    ],
)
def test_bad_input_is_400_naming_the_field(ext, body, target) -> None:
    assert arm_error(ext.post(IMPORT, json=body), 400)["target"] == target


def test_a_source_error_writes_nothing(ext, client) -> None:
    body = webapp()
    del body["set"][WEBAPP_URI]
    error = arm_error(ext.post(IMPORT, json={**body, "dryRun": False}), 400)
    assert error["target"] == "files" and WEBAPP_URI in error["message"]
    assert client.get(path("rg1", "webjobs")).status_code == 404


@pytest.mark.parametrize("reference", ["/etc/passwd", "../../../../../../etc/passwd"])
def test_a_source_cannot_read_the_servers_files(ext, client, reference) -> None:
    """`file()` of an uploaded Terraform source reads only the upload's own files."""
    main = (FIXTURES / "terraform" / "docs-job-recurring-daily" / "main.tf").read_text()
    main = main.replace('"this is some text"', f'file("{reference}")')
    body = {"files": [{"name": "main.tf", "content": main}], "resourceGroup": "docs",
            "collection": "standard"}  # fmt: skip
    response = ext.post(IMPORT, json=body)
    assert "root:" not in response.text and "/tmp/" not in response.text
    error = arm_error(response, 400)
    assert error["target"] == "files" and "is not there (relative to .)" in error["message"]
