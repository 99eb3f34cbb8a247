"""Every job body of the original Azure Scheduler documentation, pasted into the API over real
HTTP: what a user would paste is accepted and round-trips (what was sent comes back, enums in
canonical case, secrets never); what is genuinely invalid (JSON with comments, a typo, an
old-API spelling, a missing credential) gets a 400 naming the field and saying how to fix it.

The bodies are copied from the documentation pages (the REST reference's job, actions,
recurrence and retry policy; the "advanced complexity" page's recurrence-schedule table), with
their `// comments` and trailing commas removed, as a user pasting them does after the first
"not valid JSON" answer (which is tested too).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import arm_error, job_path, make_collection

HTTP_ACTION = {"type": "Http", "request": {"uri": "http://contoso.com/foo", "method": "GET"}}

#: The REST reference's job definition (2016-03-01), `properties` as the API expects it
#: (`retryPolicy` inside `request`, as the reference has it).
REFERENCE_JOB = {
    "startTime": "2012-08-04T00:00Z",
    "action": {
        "type": "Http",
        "request": {
            "uri": "http://contoso.com/some-method",
            "method": "PUT",
            "body": "Posting from a timer",
            "headers": {"Content-Type": "application/json"},
            "retryPolicy": {"retryType": "None"},
        },
        "errorAction": {
            "type": "Http",
            "request": {"uri": "http://contoso.com/notifyError", "method": "POST"},
        },
    },
    "recurrence": {
        "frequency": "Week",
        "interval": 1,
        "schedule": {"weekDays": ["Monday", "Wednesday", "Friday"], "hours": [10, 22]},
        "count": 10,
        "endTime": "2012-11-04",
    },
    "state": "Disabled",
    "status": {
        "lastExecutionTime": "2007-03-01T13:00:00Z",
        "nextExecutionTime": "2007-03-01T14:00:00Z ",
        "executionCount": 3,
        "failureCount": 0,
        "faultedCount": 0,
    },
}

#: The older REST reference's job (lower-case enums, retryPolicy before request).
CLASSIC_JOB = {
    "startTime": "2012-08-04T00:00Z",
    "action": {
        "type": "http",
        "retryPolicy": {"retryType": "none"},
        "request": {
            "uri": "http://contoso.com/foo",
            "method": "PUT",
            "body": "Posting from a timer",
            "headers": {"Content-Type": "application/json"},
        },
        "errorAction": {
            "type": "http",
            "request": {"uri": "http://contoso.com/notifyError", "method": "POST"},
        },
    },
    "recurrence": {
        "frequency": "week",
        "interval": 1,
        "schedule": {"weekDays": ["monday", "wednesday", "friday"], "hours": [10, 22]},
        "count": 10,
        "endTime": "2012-11-04",
    },
    "state": "disabled",
    "status": REFERENCE_JOB["status"],
}


def _service_bus(kind: str, entity: dict[str, str]) -> dict[str, Any]:
    """The reference's Service Bus action, with the key it leaves out (see the refusal below)."""
    return {
        "type": f"serviceBus{kind}",
        f"serviceBus{kind}Message": {
            **entity,
            "namespace": "mySBNamespace",
            "transportType": "netMessaging",
            "authentication": {
                "sasKeyName": "QPolicy",
                "sasKey": "c2VjcmV0LWtleQ==",
                "type": "sharedAccessKey",
            },
            "message": "Some message",
            "brokeredMessageProperties": {},
            "customMessageProperties": {"appname": "FromScheduler"},
        },
    }


def _recurring(recurrence: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"action": HTTP_ACTION, "recurrence": recurrence, **extra}


#: The "advanced complexity" page's schedule table (interval 1, the frequency its text says
#: each needs); its three typos (`{hours":`, `{minutes:`, a missing comma) fixed.
SCHEDULES = [
    {"hours": [5]},
    {"minutes": [15], "hours": [5]},
    {"minutes": [15], "hours": [5, 17]},
    {"minutes": [15, 45], "hours": [5, 17]},
    {"minutes": [0, 15, 30, 45]},
    {"hours": list(range(24))},
    {"minutes": [0]},
    {"minutes": [15]},
    {"hours": [17], "weekDays": ["saturday"]},
    {"hours": [17], "weekDays": ["monday", "wednesday", "friday"]},
    {"minutes": [15, 45], "hours": [17], "weekDays": ["monday", "wednesday", "friday"]},
    {"hours": [5, 17], "weekDays": ["monday", "wednesday", "friday"]},
    {"minutes": [15, 45], "hours": [5, 17], "weekDays": ["monday", "wednesday", "friday"]},
    {"minutes": [0, 15, 30, 45], "weekDays": ["monday", "tuesday", "wednesday", "thursday",
                                              "friday"]},
    {"minutes": [0, 15, 30, 45], "hours": [9, 10, 11, 12, 13, 14, 15, 16],
     "weekDays": ["monday", "tuesday", "wednesday", "thursday", "friday"]},
    {"weekDays": ["sunday"]},
    {"weekDays": ["tuesday", "thursday"]},
    {"minutes": [0], "hours": [6], "monthDays": [28]},
    {"minutes": [0], "hours": [6], "monthDays": [-1]},
    {"minutes": [0], "hours": [6], "monthDays": [1, -1]},
    {"monthDays": [1, -1]},
    {"monthDays": [1, 14]},
    {"monthDays": [2]},
    {"minutes": [0], "hours": [5], "monthlyOccurrences": [{"day": "friday", "occurrence": 1}]},
    {"monthlyOccurrences": [{"day": "friday", "occurrence": 1}]},
    {"monthlyOccurrences": [{"day": "friday", "occurrence": -3}]},
    {"minutes": [15], "hours": [5], "monthlyOccurrences": [
        {"day": "friday", "occurrence": 1}, {"day": "friday", "occurrence": -1}]},
    {"monthlyOccurrences": [{"day": "friday", "occurrence": 1},
                            {"day": "friday", "occurrence": -1}]},
    {"monthlyOccurrences": [{"day": "friday", "occurrence": 5}]},
    {"minutes": [0, 15, 30, 45], "monthlyOccurrences": [{"day": "friday", "occurrence": -1}]},
    {"minutes": [15, 45], "hours": [5, 17], "monthlyOccurrences": [
        {"day": "wednesday", "occurrence": 3}]},
    # The reference's table: a single integer for minutes/hours, an occurrence without its
    # optional number ("{Sunday} is every Sunday of the month").
    {"minutes": 30, "hours": 8},
    {"monthlyOccurrences": [{"day": "sunday"}]},
]  # fmt: skip


def _frequency(schedule: dict[str, Any]) -> str:
    if "weekDays" in schedule:
        return "week"
    if "monthDays" in schedule or "monthlyOccurrences" in schedule:
        return "month"
    return "day"


ACCEPTED = {
    "reference-job": REFERENCE_JOB,
    "classic-job": CLASSIC_JOB,
    "storage-queue": {"action": {"type": "storageQueue", "queueMessage": {
        "storageAccount": "myStorageAccount", "queueName": "myqueue", "sasToken": "TOKEN",
        "message": "My message body"}}},
    "service-bus-queue": {"action": _service_bus("Queue", {"queueName": "q1"})},
    "service-bus-topic": {"action": _service_bus("Topic", {"topicPath": "t1"})},
    "recurrence-object": _recurring({
        "frequency": "Week", "interval": 1,
        "schedule": {"hours": [10, 22], "minutes": [0, 30],
                     "weekDays": ["Monday", "Wednesday", "Friday"]},
        "count": 10, "endTime": "2012-11-04"}),
    "start-time-in-the-past": _recurring(
        {"frequency": "Day", "interval": 2}, startTime="2015-04-07T14:00Z"),
    "times-with-offsets": _recurring(
        {"frequency": "hour", "interval": 10, "count": 5, "endTime": "2033-02-09T09:30:00-08:00"},
        startTime="2013-01-09T09:30:00-08:00"),
    **{
        f"schedule-{i}": _recurring({"frequency": _frequency(s), "interval": 1, "schedule": s})
        for i, s in enumerate(SCHEDULES)
    },
}  # fmt: skip

#: What comes back differently from what was sent, by design: a `retryPolicy` given inside
#: `request` is stored at the action level; durations in canonical form.
RETURNED_AS = {
    "reference-job": lambda sent: _with_retry_policy_lifted(sent),
    "retry-policy-inside-request": lambda sent: _with_retry_policy_lifted(sent),
    "retry-interval-of-a-day": lambda sent: {"action": {**sent["action"], "retryPolicy": {
        **sent["action"]["retryPolicy"], "retryInterval": "P1D"}}},
}  # fmt: skip

ACCEPTED |= {
    "retry-policy-inside-request": {"action": {"type": "Http", "request": {
        "uri": "http://contoso.com/some-method", "method": "PUT",
        "retryPolicy": {"retryType": "None"}}}},
    "retry-interval-of-a-day": {"action": {**HTTP_ACTION, "retryPolicy": {
        "retryType": "Fixed", "retryInterval": "PT1D", "retryCount": 2}}},
}  # fmt: skip

#: The documentation's Storage-queue action without `sasToken`: it sends with the app's own
#: identity, so it is accepted for an account the app may reach with it (here Azurite's
#: development account, the app's own) and refused, naming the field, for any other.
QUEUE_WITHOUT_SAS_TOKEN = {"action": {"type": "storageQueue", "queueMessage": {
    "storageAccount": "devstoreaccount1", "queueName": "myqueue",
    "message": "My message body"}}}  # fmt: skip


def _with_retry_policy_lifted(sent: dict[str, Any]) -> dict[str, Any]:
    request = dict(sent["action"]["request"])
    policy = request.pop("retryPolicy")
    return {**sent, "action": {**sent["action"], "request": request, "retryPolicy": policy}}


SECRETS = {"sastoken", "saskey", "password", "pfx", "secret"}  # folded
READ_ONLY = {"status", "state"}  # state is checked on its own: an ended job is Completed


def _folded(value: Any) -> Any:
    """`value` with keys and strings lower-cased (enums come back in canonical case; the
    wire's `Occurrence` is the official spelling of `occurrence`) and single integers as
    one-element lists (the schedule's documented shorthand)."""
    if isinstance(value, dict):
        return {key.lower(): _folded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_folded(item) for item in value]
    return value.lower() if isinstance(value, str) else value


def _assert_sent_comes_back(sent: Any, returned: Any, path: str = "properties") -> None:
    if isinstance(sent, dict):
        assert isinstance(returned, dict), path
        for key, item in sent.items():
            if key in SECRETS:
                assert key.lower() not in returned, f"{path}.{key} is a secret"
            elif key not in READ_ONLY or path != "properties":
                assert key.lower() in returned, f"{path}.{key} was dropped"
                _assert_sent_comes_back(item, returned[key.lower()], f"{path}.{key}")
    elif isinstance(returned, list) and not isinstance(sent, list):
        assert returned == [sent], path
    else:
        assert sent == returned, path


def _put_and_check(client, name: str, properties: dict[str, Any]) -> None:
    path = job_path(name)
    response = client.put(path, json={"properties": properties})
    assert response.status_code in (200, 201), response.text
    stored = client.get(path)
    assert stored.status_code == 200
    assert stored.json()["properties"] == response.json()["properties"]
    returned = _folded(stored.json()["properties"])
    expected = RETURNED_AS.get(name, lambda sent: sent)(properties)
    _assert_sent_comes_back(_folded(expected), returned)
    if "state" in properties:
        assert returned["state"] in (properties["state"].lower(), "completed")


@pytest.fixture
def collection(client):
    make_collection(client, sku={"name": "P20Premium"})


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_a_documented_job_is_accepted_and_round_trips(client, collection, name):
    _put_and_check(client, name, ACCEPTED[name])


def test_a_documented_queue_job_without_sas_token_uses_the_apps_identity(client, collection):
    _put_and_check(client, "storage-queue-without-sas-token", QUEUE_WITHOUT_SAS_TOKEN)
    other = {
        "action": {
            **QUEUE_WITHOUT_SAS_TOKEN["action"],
            "queueMessage": {
                **QUEUE_WITHOUT_SAS_TOKEN["action"]["queueMessage"],
                "storageAccount": "myStorageAccount",
            },
        }
    }
    error = arm_error(client.put(job_path(), json={"properties": other}), 400)
    assert error["target"] == "properties.action.queueMessage.sasToken"
    assert "mystorageaccount" in error["message"]


def test_a_service_bus_action_without_its_key_names_the_missing_key(client, collection):
    """The reference shows the action without `sasKey` (it is never returned); without it
    nothing can authenticate to Service Bus, so it is refused, naming the field."""
    action = _service_bus("Queue", {"queueName": "q1"})
    del action["serviceBusQueueMessage"]["authentication"]["sasKey"]
    error = arm_error(client.put(job_path(), json={"properties": {"action": action}}), 400)
    assert error["target"] == "properties.action.serviceBusQueueMessage.authentication.sasKey"


@pytest.mark.parametrize(
    "text",
    [
        '{"properties": {"startTime": "2012-08-04T00:00Z", // optional\n'
        ' "action": {"type": "http"}}}',
        '{"properties": {"action": {"type": "Http", "request": {"uri": "http://a/", '
        '"method": "GET"}}, "recurrence": {"frequency": "Day", "schedule": {hours":[0, 1]}}}}',
        '{"properties": {"action": {"type": "Http", "request": {"uri": "http://a/", '
        '"method": "GET"},},}}',
    ],
    ids=["comments", "missing-quote", "trailing-commas"],
)
def test_documented_json_that_is_not_json_is_a_400_with_its_position(client, collection, text):
    response = client.put(job_path(), content=text, headers={"Content-Type": "application/json"})
    error = arm_error(response, 400)
    assert error["target"] == "body" and "not valid JSON" in error["message"]
    assert "line 1 column" in error["message"] or "line 2 column" in error["message"]


@pytest.mark.parametrize(
    ("recurrence", "target", "hint"),
    [
        ({"frequency": "monthly", "interval": 1}, "frequency", "'Month'"),
        ({"frequency": "Weekly"}, "frequency", "'Week'"),
        ({"frequency": "Day", "schedule": {"minute": [30], "hour": [8, 17]}},
         "schedule.minute", "'minutes'"),
        ({"frequency": "Week", "schedule": {"weekday": ["Monday"]}},
         "schedule.weekday", "'weekDays'"),
        ({"frequency": "Day", "intervall": 2}, "intervall", "'interval'"),
    ],
)  # fmt: skip
def test_an_old_or_misspelt_name_is_a_400_that_suggests_the_right_one(
    client, collection, recurrence, target, hint
):
    body = {"properties": _recurring(recurrence)}
    error = arm_error(client.put(job_path(), json=body), 400)
    assert error["target"] == "properties.recurrence." + target
    assert f"did you mean {hint}?" in error["message"]


def test_an_enum_typo_is_a_400_that_suggests_the_right_value(client, collection):
    action = {**HTTP_ACTION, "retryPolicy": {"retryType": "Fix"}}
    error = arm_error(client.put(job_path(), json={"properties": {"action": action}}), 400)
    assert error["target"] == "properties.action.retryPolicy.retryType"
    assert "did you mean 'Fixed'?" in error["message"]


def test_a_job_pasted_without_its_properties_wrapper_says_where_it_belongs(client, collection):
    """The 2016-03-01 reference page shows a job's fields at the top level."""
    body = {key: REFERENCE_JOB[key] for key in ("startTime", "action", "recurrence")}
    error = arm_error(client.put(job_path(), json=body), 400)
    assert error["target"] in body
    assert 'inside "properties"' in error["message"]
