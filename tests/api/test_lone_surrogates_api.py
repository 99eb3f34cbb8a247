"""A lone surrogate (`"\\ud800"` written as a JSON escape) anywhere in a request body is a 400
naming where it is, before anything is written; and what an older version stored with one
is still read, listed and shown, each lone surrogate as U+FFFD (real HTTP, real Azurite).

Such a string is valid JSON but not text: it has no UTF-8 form, so a job holding one could
be stored (the tables keep it as an escape) but not returned, run or shown afterwards.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import httpx
import pytest

from scheduler_lib.domain import JobDefinition
from scheduler_lib.store import get_collection, get_job, put_job
from scheduler_lib.store.collections import put_collection
from tests.api.conftest import (
    COLLECTIONS,
    RG,
    SUB,
    arm_error,
    collection_path,
    http_action,
    job_body,
    job_path,
    make_collection,
)

LONE = "\ud800"
REPLACED = "\ufffd"


def send(client: httpx.Client, method: str, path: str, body: Any) -> httpx.Response:
    """`body` as the JSON text a client writes: every non-ASCII character as an escape, so
    a lone surrogate travels as `\\ud800` (httpx's own encoder cannot encode it)."""
    text = json.dumps(body)  # ensure_ascii: "\ud800" is written as its escape
    assert "\\ud800" in text or "\\udc00" in text
    return client.request(
        method, path, content=text.encode(), headers={"content-type": "application/json"}
    )


@pytest.fixture
def coll(client: httpx.Client) -> None:
    make_collection(client)


def assert_refused(response: httpx.Response, target: str) -> None:
    error = arm_error(response, 400)
    assert error["target"] == target, error
    assert "surrogate" in error["message"]


@pytest.mark.parametrize(
    ("properties", "target"),
    [
        (
            {"action": http_action(method="POST", body=f"a{LONE}b")},
            "properties.action.request.body",
        ),
        (
            {"action": http_action(headers={"x-note": LONE})},
            "properties.action.request.headers.x-note",
        ),
        ({"action": http_action(), "pauseNote": LONE}, "properties.pauseNote"),
        (
            {"action": http_action(), "recurrence": {"frequency": "Day", "timeZone": LONE}},
            "properties.recurrence.timeZone",
        ),
        # In a key, the path shows the key with the lone surrogate escaped.
        (
            {"action": http_action(headers={"x\udc00": "v"})},
            "properties.action.request.headers.x\\udc00",
        ),
        (
            {"action": http_action(), "recurrence": {"schedule": {"hours": [1, LONE]}}},
            "properties.recurrence.schedule.hours[1]",
        ),
    ],
)
def test_a_job_put_is_refused_and_nothing_is_stored(
    client_ext: httpx.Client, coll: None, properties: dict[str, Any], target: str
) -> None:
    assert_refused(send(client_ext, "PUT", job_path(), {"properties": properties}), target)
    assert client_ext.get(job_path()).status_code == 404
    listed = client_ext.get(collection_path() + "/jobs")
    assert listed.status_code == 200 and listed.json()["value"] == []


def test_a_job_patch_is_refused_and_the_job_is_unchanged(client: httpx.Client, coll: None) -> None:
    created = client.put(job_path(), json=job_body())
    assert created.status_code == 201
    patch = {"properties": {"action": {"request": {"body": LONE}}}}
    assert_refused(send(client, "PATCH", job_path(), patch), "properties.action.request.body")
    after = client.get(job_path())
    assert after.status_code == 200 and after.headers["etag"] == created.headers["etag"]


def test_a_collection_is_refused_naming_the_tag(client: httpx.Client) -> None:
    body = {"location": "westus", "tags": {"x": LONE}, "properties": {}}
    assert_refused(send(client, "PUT", collection_path(), body), "tags.x")
    assert client.get(collection_path()).status_code == 404
    make_collection(client)
    assert_refused(send(client, "PATCH", collection_path(), {"tags": {"x": LONE}}), "tags.x")
    assert client.get(collection_path()).json().get("tags", {}) == {}  # none: none shown


def test_the_preview_and_the_backfill_are_refused(client_ext: httpx.Client, coll: None) -> None:
    preview = {"startTime": "2026-03-05T09:00:00Z", "recurrence": {"frequency": f"Day{LONE}"}}
    assert_refused(send(client_ext, "POST", "/preview", preview), "recurrence.frequency")
    client_ext.put(
        job_path(), json=job_body(startTime="2026-03-01T00:00:00Z", recurrence={"frequency": "Day"})
    )
    backfill = {"from": f"2026-03-02T00:00:00Z{LONE}", "to": "2026-03-03T00:00:00Z"}
    assert_refused(send(client_ext, "POST", job_path() + "/backfill", backfill), "from")


def test_a_lone_surrogate_as_the_whole_body_names_the_body(client: httpx.Client) -> None:
    assert_refused(send(client, "POST", "/preview", LONE), "body")


def test_a_job_stored_with_one_by_an_older_version_is_still_read_and_listed(
    client_ext: httpx.Client, coll: None, store, clock
) -> None:
    """Written straight into Azurite through the store, as a version without the check
    stored it: GET, the list and the dashboard's JSON show U+FFFD in its place."""
    created = client_ext.put(job_path(), json=job_body(pauseNote="ok"))
    assert created.status_code == 201
    record = get_job(store, SUB, RG, "coll", "job1")
    definition = {
        **record.definition.document,
        "pauseNote": f"paused {LONE}",
        "action": http_action(method="POST", body=f"a{LONE}b"),
    }
    put_job(store, replace(record, definition=JobDefinition(definition)), etag=record.etag)

    got = client_ext.get(job_path())
    assert got.status_code == 200, got.text
    properties = got.json()["properties"]
    assert properties["pauseNote"] == f"paused {REPLACED}"
    assert properties["action"]["request"]["body"] == f"a{REPLACED}b"
    listed = client_ext.get(collection_path() + "/jobs")
    assert listed.status_code == 200, listed.text
    assert [job["properties"]["pauseNote"] for job in listed.json()["value"]] == [
        f"paused {REPLACED}"
    ]
    # Saving it again as read stores U+FFFD: the job is repaired by its next write.
    again = client_ext.put(job_path(), json={"properties": properties})
    assert again.status_code == 200, again.text
    stored = get_job(store, SUB, RG, "coll", "job1").definition.document
    assert stored["pauseNote"] == f"paused {REPLACED}"


def test_a_collection_stored_with_one_is_still_read_and_listed(
    client: httpx.Client, coll: None, store
) -> None:
    record = get_collection(store, SUB, RG, "coll")
    damaged = replace(record, tags={"x": LONE, f"k{LONE}": "v"}, location=f"west{LONE}")
    put_collection(store, damaged, etag=record.etag)

    got = client.get(collection_path())
    assert got.status_code == 200, got.text
    assert got.json()["tags"] == {"x": REPLACED, f"k{REPLACED}": "v"}
    assert got.json()["location"] == f"west{REPLACED}"
    listed = client.get(COLLECTIONS)
    assert listed.status_code == 200, listed.text
    assert [c["tags"] for c in listed.json()["value"]] == [{"x": REPLACED, f"k{REPLACED}": "v"}]
