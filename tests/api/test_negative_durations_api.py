"""A negative ISO 8601 duration (`-PT1S`) is refused in every duration field a job has, a
400 naming the field that says it is negative (real HTTP, real Azurite). One reader parses
every duration (`wire/durations.read_iso_duration`), so each field refuses it the same
way; zero is refused where it means nothing (a retry now, a message that lives for no
time, an empty window), and accepted by `maxJitter`, where `PT0S` means "no jitter"."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.api.conftest import arm_error, http_action, job_body, job_path, make_collection

RECURRING = {"startTime": "2026-03-05T09:00:00Z", "recurrence": {"frequency": "Day"}}
SERVICE_BUS = "properties.action.serviceBusQueueMessage.brokeredMessageProperties.timeToLive"


def _retry(**policy: Any) -> dict[str, Any]:
    return job_body(action={**http_action(), "retryPolicy": policy})


def _ttl(value: str) -> dict[str, Any]:
    return job_body(action={
        "type": "ServiceBusQueue",
        "serviceBusQueueMessage": {
            "queueName": "q", "namespace": "contoso-bus", "message": "hi",
            "authentication": {"sasKeyName": "k", "sasKey": "secret"},
            "brokeredMessageProperties": {"timeToLive": value},
        },
    })  # fmt: skip


#: field path -> a job body with `value` in that field.
FIELDS = {
    "properties.maxJitter": lambda v: job_body(**RECURRING, maxJitter=v),
    "properties.action.retryPolicy.retryInterval": lambda v: _retry(
        retryType="Fixed", retryInterval=v
    ),
    "properties.action.retryPolicy.maxRetryInterval": lambda v: _retry(
        retryType="Exponential", retryInterval="PT15S", maxRetryInterval=v
    ),
    "properties.action.retryPolicy.maxRetryDuration": lambda v: _retry(
        retryType="Fixed", retryInterval="PT15S", maxRetryDuration=v
    ),
    "properties.catchUpWindow": lambda v: job_body(
        **RECURRING, missedRunPolicy="RunAll", catchUpWindow=v
    ),
    SERVICE_BUS: _ttl,
}


@pytest.fixture
def coll(client: httpx.Client) -> None:
    make_collection(client, sku={"name": "P20Premium"})


@pytest.mark.parametrize("value", ["-PT1S", "-P1D", "-pt30m", "-PT1D"])
@pytest.mark.parametrize("field", sorted(FIELDS))
def test_a_negative_duration_is_refused_naming_the_field(
    client_ext: httpx.Client, coll: None, field: str, value: str
) -> None:
    error = arm_error(client_ext.put(job_path(), json=FIELDS[field](value)), 400)
    assert error["target"] == field, error
    assert "negative" in error["message"], error
    assert client_ext.get(job_path()).status_code == 404


@pytest.mark.parametrize("field", sorted(set(FIELDS) - {"properties.maxJitter"}))
def test_zero_is_refused_where_it_means_nothing(
    client_ext: httpx.Client, coll: None, field: str
) -> None:
    error = arm_error(client_ext.put(job_path(), json=FIELDS[field]("PT0S")), 400)
    assert error["target"] == field and "at least" in error["message"], error


def test_zero_jitter_is_no_jitter(client_ext: httpx.Client, coll: None) -> None:
    created = client_ext.put(job_path(), json=FIELDS["properties.maxJitter"]("PT0S"))
    assert created.status_code == 201, created.text
    status = created.json()["properties"]["status"]
    assert status["nextExecutionTime"] == RECURRING["startTime"]


def test_a_negative_jitter_is_refused_by_patch_too(client_ext: httpx.Client, coll: None) -> None:
    assert client_ext.put(job_path(), json=job_body(**RECURRING)).status_code == 201
    patch = {"properties": {"maxJitter": "-PT1S"}}
    error = arm_error(client_ext.patch(job_path(), json=patch), 400)
    assert error["target"] == "properties.maxJitter" and "negative" in error["message"]


def test_a_negative_jitter_in_a_preview_is_an_error_of_it(client_ext: httpx.Client) -> None:
    answer = client_ext.post("/preview", json={**RECURRING, "maxJitter": "-PT1S"})
    assert answer.status_code == 200
    [error] = answer.json()["errors"]
    assert error["target"] == "maxJitter" and "negative" in error["message"]
