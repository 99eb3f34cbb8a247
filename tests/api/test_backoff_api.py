"""Extension 1 (retry with backoff) through the API, real HTTP: `retryType: Exponential`,
`maxRetryInterval`, `maxRetryDuration` and `retryOn` validated naming the field, stored,
returned by 2026-12-01, refused and hidden by 2016-03-01 (which shows Exponential as Fixed).
The executor's side: tests/execution/test_backoff.py and tests/test_backoff_end_to_end.py."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import arm_error, http_action, job_body, job_path, make_collection

POLICY = "properties.action.retryPolicy"


@pytest.fixture
def coll(client):
    make_collection(client)


def with_policy(policy: dict[str, Any], **action: Any) -> dict[str, Any]:
    return job_body(action={**http_action(), "retryPolicy": policy, **action})


EXPONENTIAL = {
    "retryType": "exponential",
    "retryInterval": "PT20S",
    "retryCount": 5,
    "maxRetryInterval": "PT10M",
    "maxRetryDuration": "PT1H",
    "retryOn": ["5xx", 429, "408", "transport", "5XX"],
}


def test_an_exponential_policy_is_stored_and_shown_to_each_version(client, client_ext, coll):
    created = client_ext.put(job_path(), json=with_policy(EXPONENTIAL))
    assert created.status_code == 201, created.text
    assert created.json()["properties"]["action"]["retryPolicy"] == {
        "retryType": "Exponential",
        "retryInterval": "PT20S",
        "retryCount": 5,
        "maxRetryInterval": "PT10M",
        "maxRetryDuration": "PT1H",
        "retryOn": ["5xx", "429", "408", "transport"],
    }
    old = client.get(job_path()).json()["properties"]["action"]["retryPolicy"]
    assert old == {"retryType": "fixed", "retryInterval": "PT20S", "retryCount": 5}
    # A 2016-03-01 PATCH of something else leaves the policy as it is.
    patched = client.patch(job_path(), json={"properties": {"state": "Disabled"}})
    assert patched.status_code == 200, patched.text
    kept = client_ext.get(job_path()).json()["properties"]["action"]["retryPolicy"]
    assert kept["retryType"] == "Exponential" and kept["retryOn"][0] == "5xx"


@pytest.mark.parametrize(
    "policy, field",
    [
        ({"retryType": "Exponential"}, "retryType"),
        ({"retryType": "Fixed", "retryOn": ["5xx"]}, "retryOn"),
        ({"retryType": "Fixed", "maxRetryDuration": "PT1H"}, "maxRetryDuration"),
    ],
)
def test_the_old_version_refuses_each_of_them(client, coll, policy, field):
    error = arm_error(client.put(job_path(), json=with_policy(policy)), 400)
    assert error["target"] == f"{POLICY}.{field}"


@pytest.mark.parametrize(
    "policy, field, words",
    [
        ({"retryType": "Fixed", "maxRetryInterval": "PT5M"}, "maxRetryInterval", "Exponential"),
        (
            {"retryType": "Exponential", "retryInterval": "PT5M", "maxRetryInterval": "PT1M"},
            "maxRetryInterval",
            "at least retryInterval",
        ),
        ({"retryType": "Exponential", "maxRetryInterval": "PT5S"}, "maxRetryInterval", "PT15S"),
        ({"retryType": "Exponential", "maxRetryInterval": "P600D"}, "maxRetryInterval", "18"),
        ({"retryType": "Exponential", "maxRetryDuration": "P1M"}, "maxRetryDuration", "days"),
        (
            {"retryType": "Fixed", "retryInterval": "PT5M", "maxRetryDuration": "PT1M"},
            "maxRetryDuration",
            "at least retryInterval",
        ),
        ({"retryType": "None", "retryOn": ["5xx"]}, "retryOn", "retryType None"),
        ({"retryType": "None", "maxRetryDuration": "PT1H"}, "maxRetryDuration", "None"),
        ({"retryType": "Exponential", "retryOn": []}, "retryOn", "non-empty"),
        ({"retryType": "Exponential", "retryOn": "5xx"}, "retryOn", "list"),
        ({"retryType": "Exponential", "retryOn": ["5xx", "4xx"]}, "retryOn[1]", "status code"),
        ({"retryType": "Exponential", "retryOn": ["200"]}, "retryOn[0]", "300 to 599"),
        ({"retryType": "Exponential", "retryOn": [True]}, "retryOn[0]", "status code"),
        ({"retryType": "Exponential", "retryCount": 21}, "retryCount", "at most 20"),
        ({"retryType": "Exponential", "retryInterval": "PT1S"}, "retryInterval", "PT15S"),
    ],
)
def test_bad_policies_are_refused_naming_the_field(client_ext, coll, policy, field, words):
    error = arm_error(client_ext.put(job_path(), json=with_policy(policy)), 400)
    assert error["target"] == f"{POLICY}.{field}", error
    assert words in error["message"]


def test_an_error_action_policy_is_checked_at_its_own_path(client_ext, coll):
    error_action = {**http_action(), "retryPolicy": {"retryType": "Fixed", "retryOn": ["5xx"]}}
    error_action["retryPolicy"]["maxRetryInterval"] = "PT1M"
    body = with_policy({"retryType": "Exponential"}, errorAction=error_action)
    error = arm_error(client_ext.put(job_path(), json=body), 400)
    assert error["target"] == "properties.action.errorAction.retryPolicy.maxRetryInterval"
