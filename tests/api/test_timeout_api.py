"""An HTTP action's `timeout` through the API (api-version 2026-12-01, real HTTP): validated
(15 s to the bound host.json's functionTimeout sets), stored canonical and returned, on the
action and its errorAction; refused by 2016-03-01 and on non-HTTP actions, each naming the
field (docs/extensions.md)."""

from __future__ import annotations

import httpx
import pytest

from tests.api.conftest import arm_error, http_action, job_body, job_path, make_collection

FIELD = "properties.action.timeout"


@pytest.fixture
def coll(client: httpx.Client) -> None:
    make_collection(client)


def test_stored_canonical_returned_and_hidden_from_2016(client, client_ext, coll) -> None:
    action = {**http_action(), "timeout": "pt5m",
              "errorAction": {**http_action(), "timeout": "PT15S"}}  # fmt: skip
    created = client_ext.put(job_path(), json=job_body(action=action))
    assert created.status_code == 201, created.text
    stored = created.json()["properties"]["action"]
    assert stored["timeout"] == "PT5M" and stored["errorAction"]["timeout"] == "PT15S"
    old = client.get(job_path()).json()["properties"]["action"]
    assert "timeout" not in old and "timeout" not in old["errorAction"]
    # A 2016-03-01 PATCH keeps it; a 2026-12-01 PATCH changes or drops it.
    assert client.patch(job_path(), json={"properties": {"state": "Disabled"}}).status_code == 200
    patch = {"properties": {"action": {"timeout": "PT9M", "errorAction": {"timeout": None}}}}
    patched = client_ext.patch(job_path(), json=patch)
    assert patched.status_code == 200, patched.text
    action = patched.json()["properties"]["action"]
    assert action["timeout"] == "PT9M" and "timeout" not in action["errorAction"]


def test_the_old_version_refuses_it_naming_the_field(client, coll) -> None:
    error = arm_error(client.put(job_path(), json=job_body(
        action={**http_action(), "timeout": "PT30S"})), 400)  # fmt: skip
    assert error["target"] == FIELD and "not a known property" in error["message"]
    assert client.put(job_path(), json=job_body()).status_code == 201
    patch = {"properties": {"action": {"timeout": "PT30S"}}}
    assert arm_error(client.patch(job_path(), json=patch), 400)["target"] == FIELD


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("PT0S", "at least PT15S"),
        ("-PT30S", "must not be negative"),
        ("PT14S", "at least PT15S"),
        ("PT9M1S", "at most PT9M"),
        ("PT30M", "functionTimeout"),
        ("P1D", "at most PT9M"),
        ("P1M", "days, hours, minutes or seconds"),
        (60, "ISO 8601"),
        ("soon", "ISO 8601"),
        ("", "ISO 8601"),
    ],
)
def test_out_of_range_or_malformed_is_a_400_naming_it(client_ext, coll, value, why) -> None:
    action = {**http_action(), "timeout": value}
    error = arm_error(client_ext.put(job_path(), json=job_body(action=action)), 400)
    assert error["target"] == FIELD and why in error["message"], error
    action = {**http_action(), "errorAction": {**http_action(), "timeout": value}}
    error = arm_error(client_ext.put(job_path(), json=job_body(action=action)), 400)
    assert error["target"] == "properties.action.errorAction.timeout"


def test_only_http_actions_take_it(client_ext, coll) -> None:
    queue = {
        "type": "StorageQueue",
        "timeout": "PT30S",
        "queueMessage": {"storageAccount": "acct", "queueName": "q", "sasToken": "?sig=x"},
    }
    error = arm_error(client_ext.put(job_path(), json=job_body(action=queue)), 400)
    assert error["target"] == FIELD and "Http and Https" in error["message"]
