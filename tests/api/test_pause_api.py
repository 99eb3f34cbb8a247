"""`pauseNote` and `pauseAfterConsecutiveFailures` through the API (api-version 2026-12-01,
real HTTP): validated, stored, returned, refused by 2016-03-01; `status.consecutiveFailures`
returned with the new version only. (The executor's side: tests/execution/test_pause.py and
tests/test_extensions_end_to_end.py.)"""

from __future__ import annotations

import pytest

from tests.api.conftest import arm_error, job_body, job_path, make_collection


@pytest.fixture
def coll(client):
    make_collection(client)


def test_the_old_version_refuses_stop_after_failures(client, coll):
    error = arm_error(client.put(job_path(), json=job_body(pauseAfterConsecutiveFailures=3)), 400)
    assert error["target"] == "properties.pauseAfterConsecutiveFailures"
    assert "not a known property" in error["message"]


def test_a_paused_job_shows_its_note_and_its_streak(client, client_ext, coll):
    body = job_body(
        state="Disabled", pauseNote="until the migration", pauseAfterConsecutiveFailures=3
    )
    created = client_ext.put(job_path(), json=body)
    assert created.status_code == 201, created.text
    properties = created.json()["properties"]
    assert (properties["state"], properties["pauseNote"]) == ("Disabled", "until the migration")
    assert properties["pauseAfterConsecutiveFailures"] == 3
    assert properties["status"]["consecutiveFailures"] == 0
    old = client.get(job_path()).json()["properties"]
    # 2016-03-01 writes the state camelCased and shows no status for a job created Disabled.
    assert old["state"] == "disabled" and "status" not in old
    assert not {"pauseNote", "pauseAfterConsecutiveFailures"} & set(old)


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("pauseAfterConsecutiveFailures", 0, "at least 1"),
        ("pauseAfterConsecutiveFailures", 1001, "at most 1000"),
        ("pauseAfterConsecutiveFailures", "3", "integer"),
        ("pauseAfterConsecutiveFailures", True, "integer"),
        ("pauseNote", "x" * 1025, "at most 1024"),
        ("pauseNote", ["a"], "string"),
    ],
)
def test_bad_values_are_refused_naming_the_field(client_ext, coll, field, value, words):
    error = arm_error(client_ext.put(job_path(), json=job_body(**{field: value})), 400)
    assert error["target"] == f"properties.{field}" and words in error["message"]
