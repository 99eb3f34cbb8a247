"""`maxJitter` through the API (api-version 2026-12-01, real HTTP): validated and stored,
refused by 2016-03-01, shown by `nextExecutionTime`, by `POST /api/preview` and by
`python -m scheduler_lib preview` of the job as GET returns it (docs/extensions.md)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest

from tests.api.conftest import arm_error, collection_path, job_body, job_path, make_collection
from tests.schedule.test_preview import run_cli

NINE = "2026-03-05T09:00:00Z"
DAILY = {"frequency": "Day", "interval": 1}


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.fixture
def coll(client):
    make_collection(client)


def test_the_old_version_refuses_it(client, coll):
    response = client.put(job_path(), json=job_body(maxJitter="PT30S"))
    error = arm_error(response, 400)
    assert error["target"] == "properties.maxJitter" and "not a known property" in error["message"]


def test_next_execution_time_is_the_jittered_start(client, client_ext, coll):
    body = job_body(startTime=NINE, recurrence=DAILY, maxJitter="pt30s")
    created = client_ext.put(job_path(), json=body)
    assert created.status_code == 201, created.text
    properties = created.json()["properties"]
    assert properties["maxJitter"] == "PT30S"  # canonical
    start = at(properties["status"]["nextExecutionTime"])
    assert timedelta(0) <= start - at(NINE) < timedelta(seconds=30) and start.microsecond == 0
    # The same instant for every reader and every api-version: it is when the job runs.
    assert client_ext.get(job_path()).json()["properties"]["status"] == properties["status"]
    old = client.get(job_path()).json()["properties"]
    assert old["status"]["nextExecutionTime"] == properties["status"]["nextExecutionTime"]
    assert "maxJitter" not in old


def test_jobs_due_together_start_spread_out(client_ext, coll):
    starts = set()
    for index in range(20):
        body = job_body(startTime=NINE, recurrence=DAILY, maxJitter="PT30S")
        response = client_ext.put(job_path(f"report{index}"), json=body)
        starts.add(response.json()["properties"]["status"]["nextExecutionTime"])
    assert len(starts) >= 10


def test_preview_shows_the_starts_of_the_job_it_is_given(client, client_ext, coll):
    client_ext.put(job_path(), json=job_body(startTime=NINE, recurrence=DAILY, maxJitter="PT1H"))
    job = client_ext.get(job_path()).json()
    preview = client.post("/preview", json={**job, "count": 3, "now": "2026-03-05T00:00:00Z"})
    assert preview.status_code == 200, preview.text
    result = preview.json()
    assert result["executions"][0] == job["properties"]["status"]["nextExecutionTime"]
    assert result["occurrences"] == [NINE, "2026-03-06T09:00:00Z", "2026-03-07T09:00:00Z"]
    pairs = zip(result["executions"], result["occurrences"], strict=True)
    offsets = [at(start) - at(occurrence) for start, occurrence in pairs]
    assert all(timedelta(0) <= d < timedelta(hours=1) for d in offsets)
    # Without the job's id its offsets are unknown: the scheduled times, and why.
    del job["id"]
    anonymous = client.post("/preview", json={**job, "count": 3, "now": "2026-03-05T00:00:00Z"})
    assert anonymous.json()["executions"] == result["occurrences"]
    assert "PT1H" in anonymous.json()["jitter"]


def test_the_preview_command_shows_the_starts_too(client_ext, coll, tmp_path):
    client_ext.put(job_path(), json=job_body(startTime=NINE, recurrence=DAILY, maxJitter="PT1H"))
    job = client_ext.get(job_path()).json()
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job))

    done = run_cli(str(path), "--count", "2", "--now", "2026-03-05T00:00:00Z")

    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[1]
    start = job["properties"]["status"]["nextExecutionTime"]
    assert first.startswith("1  2026-03-05 09:00:00Z") and first.endswith(
        at(start).strftime("%Y-%m-%d %H:%M:%SZ")
    )


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("PT2H", "at most PT1H"),
        ("PT0.5S", "whole seconds"),
        ("P1M", "days, hours, minutes or seconds"),
        (30, "ISO 8601 duration"),
    ],
)
def test_bad_values_are_refused_naming_the_field(client_ext, coll, value, words):
    body = job_body(startTime=NINE, recurrence=DAILY, maxJitter=value)
    error = arm_error(client_ext.put(job_path(), json=body), 400)
    assert error["target"] == "properties.maxJitter" and words in error["message"]


@pytest.mark.parametrize(
    ("recurrence", "too_much", "enough"),
    [
        ({"frequency": "Minute", "interval": 1}, "PT1M", "PT59S"),
        ({"frequency": "Day", "schedule": {"hours": [9], "minutes": [0, 10]}}, "PT10M", "PT9M"),
    ],
)
def test_it_must_be_less_than_the_smallest_gap(client_ext, coll, recurrence, too_much, enough):
    """So that jittered runs keep their order and never run into the next occurrence."""
    body = job_body(startTime=NINE, recurrence=recurrence, maxJitter=too_much)
    error = arm_error(client_ext.put(job_path(), json=body), 400)
    assert error["target"] == "properties.maxJitter" and "smallest gap" in error["message"]
    body["properties"]["maxJitter"] = enough
    assert client_ext.put(job_path(), json=body).status_code == 201
    listed = client_ext.get(collection_path() + "/jobs").json()["value"]
    assert listed[0]["properties"]["maxJitter"] == enough


def test_an_old_patch_cannot_shrink_the_gap_below_the_stored_jitter(client, client_ext, coll):
    """A 2016-03-01 PATCH keeps the stored maxJitter, so the rule still holds for it."""
    client_ext.put(job_path(), json=job_body(startTime=NINE, recurrence=DAILY, maxJitter="PT30M"))
    every_minute = {"properties": {"recurrence": {"frequency": "Minute", "interval": 1}}}
    error = arm_error(client.patch(job_path(), json=every_minute), 400)
    assert error["target"] == "properties.maxJitter"
    hourly = {"properties": {"recurrence": {"frequency": "Hour", "interval": 1}}}
    assert client.patch(job_path(), json=hourly).status_code == 200
    assert client_ext.get(job_path()).json()["properties"]["maxJitter"] == "PT30M"
