"""`GET .../jobCollections/{c}/export` over real HTTP (docs/export.md): 2026-12-01 only, bad
input a 400 naming the field, a missing collection a 404, the bundle streamed a page of jobs
at a time, and its history bounded to 60 days and `HISTORY_PER_JOB` entries per job.
(Export and restore between two deployments: tests/migrate/test_export.py.)"""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest

from scheduler_lib.store import HistoryEntry, add_history
from scheduler_lib.store import jobs as job_store
from scheduler_lib.wire import bundle
from tests.api.conftest import (
    RG,
    SUB,
    arm_error,
    collection_path,
    http_action,
    job_body,
    job_path,
    make_collection,
)

EXPORT = collection_path() + "/export"


@pytest.fixture
def coll(client):
    make_collection(client)


def test_the_old_version_has_no_export(client, coll):
    error = arm_error(client.get(EXPORT), 400)
    assert error["target"] == "api-version" and "2026-12-01" in error["message"]
    unversioned = client.get(EXPORT, params={"api-version": None})
    assert arm_error(unversioned, 400)["target"] == "api-version"


@pytest.mark.parametrize("value", ["yes", "1", ""])
def test_include_history_is_true_or_false(client_ext, coll, value):
    error = arm_error(client_ext.get(EXPORT, params={"includeHistory": value}), 400)
    assert error["target"] == "includeHistory" and "true or false" in error["message"]


def test_a_missing_collection_is_404_and_a_bad_name_400(client_ext, coll):
    arm_error(client_ext.get(collection_path("nope") + "/export"), 404)
    bad = collection_path("-bad") + "/export"
    assert arm_error(client_ext.get(bad), 400)["target"] == "jobCollectionName"


def test_the_jobs_are_streamed_page_by_page(client_ext, coll, monkeypatch):
    monkeypatch.setattr(bundle, "JOB_PAGE", 2)  # 5 jobs: three store pages
    names = [f"job{i}" for i in range(5)]
    for name in names:
        assert client_ext.put(job_path(name), json=job_body()).status_code == 201
    answer = client_ext.get(EXPORT.replace("/export", "/EXPORT"))  # literals in any case
    assert answer.status_code == 200, answer.text
    assert answer.headers.get("transfer-encoding") == "chunked"  # streamed, not held whole
    document = answer.json()
    assert [job["name"] for job in document["jobs"]] == [f"coll/{n}" for n in names]
    assert document["jobCount"] == 5 and document["complete"] is True
    assert document["includesHistory"] is False and "history" not in document
    assert document["jobs"][0] == client_ext.get(job_path("job0")).json()  # as GET returns it


def test_the_history_is_the_last_60_days_at_most_100_per_job(client_ext, coll, store, clock):
    busy = {"action": http_action(), "recurrence": {"frequency": "Minute"}}
    for name in ("busy", "quiet"):
        assert client_ext.put(job_path(name), json={"properties": busy}).status_code == 201
    now = clock.now

    def add(name: str, ago: timedelta, count: int = 1) -> None:
        record = job_store.get_job(store, SUB, RG, "coll", name)
        for i in range(count):
            start = now - ago - timedelta(seconds=i)
            entry = (start, start, start, "MainAction", "Completed", "OK")
            add_history(store, HistoryEntry(record.history_key, *entry))

    add("busy", timedelta(hours=1), bundle.HISTORY_PER_JOB + 1)
    add("quiet", timedelta(days=59))
    add("quiet", timedelta(days=61))  # outside the window
    answer = client_ext.get(EXPORT, params={"includeHistory": "TRUE"})
    assert answer.status_code == 200, answer.text
    history = {h["job"]: h for h in answer.json()["history"]}
    assert len(history["busy"]["entries"]) == bundle.HISTORY_PER_JOB
    assert history["busy"]["truncated"] is True
    starts = [e["startTime"] for e in history["busy"]["entries"]]
    assert starts == sorted(starts, reverse=True)  # newest first
    assert len(history["quiet"]["entries"]) == 1 and history["quiet"]["truncated"] is False
    assert answer.json()["includesHistory"] is True


def test_export_is_documented_by_the_new_version_alone(server):
    old = httpx.get(server.api_url + "/openapi.json").json()
    new = httpx.get(server.api_url + "/openapi-2026-12-01.json").json()

    def operations(document):
        return {op["operationId"] for p in document["paths"].values() for op in p.values()}

    assert "JobCollections_Export" in operations(new)
    assert "JobCollections_Export" not in operations(old)
    documented = next(p for p in new["paths"] if p.endswith("/export"))
    parameters = {p["name"] for p in new["paths"][documented]["get"]["parameters"]}
    assert "includeHistory" in parameters
    answer = new["paths"][documented]["get"]["responses"]["200"]["content"]["application/json"]
    assert set(answer["schema"]["properties"]) >= {"kind", "collection", "jobs", "secrets"}


def test_a_notification_url_is_masked_and_listed_as_a_secret(client_ext, coll):
    """A webhook URL's path and query are its credential: the bundle holds the URL as GET
    shows it (`scheme://host/***`) and names it in `secrets`."""
    hook = "https://hooks.slack.com/services/T0SECRET/B0SECRET/XXXXKEY?sig=SIGSECRET"
    body = job_body(notifications=[{"url": hook, "events": ["Failed"], "format": "Slack"}])
    assert client_ext.put(job_path("told"), json=body).status_code == 201
    answer = client_ext.get(EXPORT)
    assert answer.status_code == 200, answer.text
    assert "SECRET" not in answer.text and "XXXXKEY" not in answer.text
    document = answer.json()
    [job] = document["jobs"]
    assert job["properties"]["notifications"][0]["url"] == "https://hooks.slack.com/***"
    assert {"collection": "coll", "job": "told", "path": "properties.notifications[0].url"} in (
        document["secrets"]
    )


def test_a_notification_signing_secret_is_listed_never_shown(client_ext, coll):
    """A subscription's signing secret is named in `secrets` (so a restore asks for it) and
    the bundle holds only `hasSecret`; a subscription without one lists no secret path."""
    secret = "whsec_" + "c3Vic2NyaXB0aW9uLXNpZ25pbmctc2VjcmV0LW9mLWV4cG9ydA=="
    body = job_body(notifications=[
        {"url": "https://hooks.example.com/a", "events": ["Failed"], "secret": secret},
        {"url": "https://hooks.example.com/b", "events": ["Failed"]}])  # fmt: skip
    assert client_ext.put(job_path("signed"), json=body).status_code == 201
    answer = client_ext.get(EXPORT)
    assert answer.status_code == 200, answer.text
    assert secret.removeprefix("whsec_") not in answer.text
    document = answer.json()
    [job] = document["jobs"]
    assert [n.get("hasSecret") for n in job["properties"]["notifications"]] == [True, None]
    paths = [s["path"] for s in document["secrets"] if s["job"] == "signed"]
    assert paths == ["properties.notifications[0].url", "properties.notifications[0].secret",
                     "properties.notifications[1].url"]  # fmt: skip
