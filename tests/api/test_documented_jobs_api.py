"""Job JSON as the Azure Scheduler documentation wrote it, over real HTTP against Azurite:
what migrating users paste must work (issue 11), and what cannot must be a 400 naming the
field."""

import pytest

from tests.api.conftest import arm_error, job_body, job_path, make_collection
from tests.api.test_documented_examples import REFERENCE_JOB

#: The documentation's comprehensive HTTP job (`retryPolicy` inside `request`), with a
#: recurrence that has not ended (the reference's ended in 2012).
DOCUMENTED_HTTP_JOB = {
    "properties": {**REFERENCE_JOB, "recurrence": {"frequency": "Week", "interval": 1}}
}


def _action(response) -> dict:
    assert response.status_code in (200, 201), response.text
    return response.json()["properties"]["action"]


def test_the_documented_http_job_keeps_its_retry_policy_at_the_action_level(client):
    make_collection(client)
    action = _action(client.put(job_path(), json=DOCUMENTED_HTTP_JOB))
    assert action["retryPolicy"] == {"retryType": "none"}  # as 2016-03-01 wrote it
    assert "retryPolicy" not in action["request"]
    assert _action(client.get(job_path())) == action


def _http(request_policy=None, action_policy=None) -> dict:
    request = {"uri": "http://example.com/", "method": "GET"}
    if request_policy is not None:
        request["retryPolicy"] = request_policy
    action = {"type": "Http", "request": request}
    if action_policy is not None:
        action["retryPolicy"] = action_policy
    return job_body(action=action)


FIXED = {"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 2}


def test_a_retry_policy_given_twice_must_agree(client):
    make_collection(client)
    same = {"retryType": "fixed", "retryInterval": "pt60s", "retryCount": 2}  # same meaning
    assert _action(client.put(job_path(), json=_http(same, FIXED)))["retryPolicy"] == {
        "retryType": "fixed", "retryInterval": "PT1M", "retryCount": 2}  # fmt: skip
    error = arm_error(client.put(job_path(), json=_http({"retryType": "None"}, FIXED)), 400)
    assert error["target"] == "properties.action.request.retryPolicy"
    error = arm_error(client.put(job_path(), json=_http({"retryType": "Sometimes"})), 400)
    assert error["target"] == "properties.action.request.retryPolicy.retryType"


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("PT1D", "P1D"),  # the documentation's "two times per day" example
        ("pt30s", "PT30S"),
        ("PT1D12H", "P1DT12H"),
        ("PT36H", "P1DT12H"),
        ("P1W", "P7D"),
    ],
)
def test_retry_intervals_are_read_liberally_and_returned_canonical(client, given, stored):
    make_collection(client)
    policy = {"retryType": "Fixed", "retryInterval": given, "retryCount": 2}
    assert _action(client.put(job_path(), json=_http(action_policy=policy)))["retryPolicy"] == {
        "retryType": "fixed", "retryInterval": stored, "retryCount": 2}  # fmt: skip


@pytest.mark.parametrize("too_long", ["PT99999999999999999999S", "P9999999999D", "P1000000000D"])
def test_overflowing_durations_are_400_naming_the_field(client, too_long):
    make_collection(client)
    policy = {"retryType": "Fixed", "retryInterval": too_long}
    error = arm_error(client.put(job_path(), json=_http(action_policy=policy)), 400)
    assert error["target"] == "properties.action.retryPolicy.retryInterval"
    action = {
        "type": "ServiceBusQueue",
        "serviceBusQueueMessage": {
            "queueName": "q",
            "namespace": "contoso-bus",
            "authentication": {"sasKeyName": "k", "sasKey": "secret"},
            "brokeredMessageProperties": {"timeToLive": too_long},
        },
    }
    error = arm_error(client.put(job_path(), json=job_body(action=action)), 400)
    assert error["target"] == (
        "properties.action.serviceBusQueueMessage.brokeredMessageProperties.timeToLive"
    )


def test_a_patched_retry_policy_replaces_the_stored_one_wherever_it_is_given(client):
    make_collection(client)
    policy = {"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 2}
    assert client.put(job_path(), json=_http(action_policy=policy)).status_code == 201
    none = {"retryType": "None"}
    patched = client.patch(job_path(), json={"properties": {"action": {"retryPolicy": none}}})
    assert _action(patched)["retryPolicy"] == {"retryType": "none"}
    inside = {"properties": {"action": {"request": {"retryPolicy": {"retryInterval": "PT1D"}}}}}
    action = _action(client.patch(job_path(), json=inside))
    assert action["retryPolicy"] == {"retryType": "fixed", "retryInterval": "P1D", "retryCount": 4}
    assert action["request"] == {"uri": "http://example.com/", "method": "GET"}
