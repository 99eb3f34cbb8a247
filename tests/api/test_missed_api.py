"""Extension 3 through the API, real HTTP: `missedRunPolicy` and `catchUpWindow` validated,
stored, returned by 2026-12-01 only and refused by 2016-03-01; `POST .../backfill` refused by
2016-03-01 and its bad ranges refused naming `from` or `to`.
(The runs: tests/test_missed_end_to_end.py.)"""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest

from scheduler_lib.domain import job_key
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.timeutil import iso_z
from tests.api.conftest import RG, SUB, arm_error, job_body, job_path, make_collection

RECURRING = {"startTime": "2026-03-01T00:00:00Z", "recurrence": {"frequency": "Hour"}}


@pytest.fixture
def coll(client):
    make_collection(client)


def test_the_policy_is_stored_and_returned_by_the_new_version(client, client_ext, coll):
    body = job_body(**RECURRING, missedRunPolicy="runall", catchUpWindow="pt2h")
    created = client_ext.put(job_path(), json=body)
    assert created.status_code == 201, created.text
    properties = created.json()["properties"]
    assert (properties["missedRunPolicy"], properties["catchUpWindow"]) == ("RunAll", "PT2H")
    old = client.get(job_path()).json()["properties"]
    assert not {"missedRunPolicy", "catchUpWindow"} & set(old)
    error = arm_error(client.put(job_path(), json=job_body(missedRunPolicy="RunLatest")), 400)
    assert error["target"] == "properties.missedRunPolicy"


@pytest.mark.parametrize(
    "extra, field, words",
    [
        ({"missedRunPolicy": "RunSome"}, "missedRunPolicy", "Skip, RunLatest, RunAll"),
        ({"missedRunPolicy": "RunAll", "catchUpWindow": "P8D"}, "catchUpWindow", "P7D"),
        ({"missedRunPolicy": "RunAll", "catchUpWindow": "PT30S"}, "catchUpWindow", "PT1M"),
        ({"missedRunPolicy": "RunAll", "catchUpWindow": "P1M"}, "catchUpWindow", "days"),
        ({"catchUpWindow": "PT1H"}, "catchUpWindow", "RunLatest or RunAll"),
        ({"missedRunPolicy": "Skip", "catchUpWindow": "PT1H"}, "catchUpWindow", "RunAll"),
    ],
)
def test_bad_values_are_refused_naming_the_field(client_ext, coll, extra, field, words):
    error = arm_error(client_ext.put(job_path(), json=job_body(**RECURRING, **extra)), 400)
    assert error["target"] == f"properties.{field}" and words in error["message"], error


def _backfill(http, body, job: str = "job1"):
    return http.post(job_path(job) + "/backfill", json=body)


def test_the_old_version_has_no_backfill(client, client_ext, coll):
    assert client_ext.put(job_path(), json=job_body(**RECURRING)).status_code == 201
    body = {"from": "2026-03-02T00:00:00Z", "to": "2026-03-02T01:00:00Z"}
    error = arm_error(_backfill(client, body), 400)
    assert error["target"] == "api-version" and "2026-12-01" in error["message"]


def test_a_backfill_answers_the_occurrences_it_queued(client_ext, coll, clock):
    assert client_ext.put(job_path(), json=job_body(**RECURRING)).status_code == 201
    answer = _backfill(client_ext, {"from": "2026-03-02T00:30:00Z", "to": "2026-03-02T03:00:00Z"})
    assert answer.status_code == 202, answer.text
    key = job_key(SUB, RG, "coll", "job1")
    hours = [iso_z(clock.now.replace(day=2, hour=h, minute=0, second=0, microsecond=0))
             for h in (1, 2, 3)]  # fmt: skip
    assert [v["expectedExecutionTime"] for v in answer.json()["value"]] == hours
    tags = [ExecutionMessage.scheduled(key, t, 1).execution_tag for t in (
        clock.now.replace(day=2, hour=h, minute=0, second=0, microsecond=0) for h in (1, 2, 3)
    )]  # fmt: skip
    assert [v["executionTag"] for v in answer.json()["value"]] == tags


@pytest.mark.parametrize(
    "body, field, words",
    [
        ({"from": "2026-03-02T05:00:00Z", "to": "2026-03-02T01:00:00Z"}, "to", "before from"),
        ({"from": "2026-03-02T00:00:00Z", "to": "2099-01-01T00:00:00Z"}, "to", "future"),
        ({"from": "2026-03-01T00:00:00Z", "to": "2026-03-04T00:00:00Z"}, "to", "more than 50"),
        ({"from": "2025-01-01T00:00:00Z", "to": "2025-01-01T01:00:00Z"}, "from", "60 days"),
        ({"to": "2026-03-02T01:00:00Z"}, "from", "required"),
        ({"from": "yesterday", "to": "2026-03-02T01:00:00Z"}, "from", "ISO 8601"),
        ({"from": "2026-03-02T00:00:00Z", "to": "2026-03-02T01:00:00Z", "x": 1}, "x", "known"),
    ],
)
def test_bad_ranges_are_refused_naming_the_field(client_ext, coll, body, field, words):
    assert client_ext.put(job_path(), json=job_body(**RECURRING)).status_code == 201
    error = arm_error(_backfill(client_ext, body), 400)
    assert error["target"] == field and words in error["message"], error


def test_a_one_off_job_has_nothing_to_backfill_and_a_missing_job_is_404(client_ext, coll, clock):
    assert client_ext.put(job_path(), json=job_body()).status_code == 201
    earlier = iso_z(clock.now - timedelta(hours=1))
    body = {"from": earlier, "to": iso_z(clock.now)}
    error = arm_error(_backfill(client_ext, body), 400)
    assert error["target"] == "properties.recurrence"
    arm_error(_backfill(client_ext, body, job="nope"), 404)


def test_backfill_is_documented_by_the_new_version_alone(server):
    old = httpx.get(server.api_url + "/openapi.json").json()
    new = httpx.get(server.api_url + "/openapi-2026-12-01.json").json()

    def operations(document):
        return {op["operationId"] for path in document["paths"].values() for op in path.values()}

    assert "Jobs_Backfill" in operations(new) and "Jobs_Backfill" not in operations(old)
    assert operations(new) - operations(old) == {
        "Jobs_Backfill",
        "JobCollections_Export",
        "JobCollections_Import",
        "Jobs_Bulk",
    }
    assert "Skipped" in new["components"]["schemas"]["JobExecutionStatus"]["enum"]
    assert "Skipped" not in old["components"]["schemas"]["JobExecutionStatus"]["enum"]
