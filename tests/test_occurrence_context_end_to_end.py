"""Extension 5 end to end (api-version 2026-12-01): `@{...}` placeholders and the occurrence's
identifiers in every action, through the real API, dispatcher tick and executor, against
Azurite and a real local HTTP target on one hand-moved clock (`tests/test_end_to_end.py`'s
`System`). Service Bus stops at the `ServiceBusSender` boundary (no emulator runs here)."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_lib.config import AZURITE_ACCOUNT
from tests import test_end_to_end as e2e
from tests.support.azurite_queues import new_queue, sas_token
from tests.support.http_target import HttpTarget
from tests.test_end_to_end import COLLECTION, SUB, System

system, target = e2e.system, e2e.target
NEW = {"api-version": "2026-12-01"}
TEXT = "at @{scheduledTime} try @{attempt} of #@{occurrence} tag @{executionTag} literal @@{x}"


def put(running: System, name: str, properties: dict[str, Any], version: str) -> Any:
    return running.client.put(
        f"{COLLECTION}/jobs/{name}", json={"properties": properties},
        params={"api-version": version},
    )  # fmt: skip


def http(uri: str, body: str, **extra: Any) -> dict[str, Any]:
    return {"type": "Http", "request": {"uri": uri, "method": "POST", "body": body, **extra}}


def test_http_body_and_headers_carry_each_attempts_context(
    system: System, target: HttpTarget
) -> None:
    target.reply(503, "busy", times=1)
    response = put(system, "Ctx", {
        "startTime": "2026-03-04T09:10:00Z",
        "recurrence": {"frequency": "Hour", "count": 3},
        "action": {
            **http(target.url, TEXT, headers={"X-Job": "@{jobId}", "X-Tag": "@{executionTag}"}),
            "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT30S", "retryCount": 1},
        },
    }, "2026-12-01")  # fmt: skip
    assert response.status_code == 201, response.text
    assert response.json()["properties"]["placeholders"] is True  # on unless set false

    system.clock.now = e2e.T0.replace(minute=10)
    [first] = system.tick_and_execute()
    system.clock.now += first.follow_up_at - system.clock.now
    system.runtime.execute(first.follow_up.to_json(), message_id="retry", dequeue_count=1)

    one, two = target.requests
    tag = one.header("x-ms-execution-tag")
    assert one.text == f"at 2026-03-04T09:10:00Z try 1 of #1 tag {tag} literal @{{x}}"
    assert two.text == f"at 2026-03-04T09:10:00Z try 2 of #1 tag {tag} literal @{{x}}"
    assert one.header("X-Tag") == tag == two.header("x-ms-execution-tag")
    assert one.header("X-Job") == one.header("x-ms-scheduler-jobid")
    assert one.header("X-Job").startswith(f"/subscriptions/{SUB}/") and one.header(
        "X-Job").endswith("/jobs/Ctx")  # fmt: skip


def test_a_2016_job_sends_placeholders_as_written(system: System, target: HttpTarget) -> None:
    body = TEXT + " @{unknown} @{"
    assert put(system, "Old", {"action": http(target.url, body)}, "2016-03-01").status_code == 201
    assert put(system, "Off", {
        "placeholders": False, "action": http(target.url, body),
    }, "2026-12-01").status_code == 201  # fmt: skip

    system.tick_and_execute()

    assert [r.text for r in target.requests] == [body, body]


@pytest.mark.parametrize(("action", "field"), [
    (http("https://example.com/", "hi @{scheduledtime}"), "properties.action.request.body"),
    (http("https://example.com/", "x", headers={"X-Run": "@{run}"}),
     "properties.action.request.headers.X-Run"),
    (http("https://example.com/", "open @{scheduledTime"), "properties.action.request.body"),
    ({**http("https://example.com/", "ok"), "errorAction": {
        "type": "StorageQueue", "queueMessage": {
            "storageAccount": "contoso", "queueName": "q", "sasToken": "?sig=x",
            "message": "@{nope}"}}},
     "properties.action.errorAction.queueMessage.message"),
])  # fmt: skip
def test_an_unknown_placeholder_is_refused_at_put_naming_the_field(
    system: System, action: dict[str, Any], field: str
) -> None:
    response = put(system, "Bad", {"action": action}, "2026-12-01")
    assert response.status_code == 400, response.text
    assert response.json()["error"]["target"] == field
    assert put(system, "Bad", {"action": action}, "2016-03-01").status_code == 201


def test_2016_refuses_the_placeholders_property(system: System) -> None:
    response = put(system, "Flag", {
        "placeholders": True, "action": http("https://example.com/", "x"),
    }, "2016-03-01")  # fmt: skip
    assert response.status_code == 400
    assert response.json()["error"]["target"] == "properties.placeholders"
    stored = put(system, "Flag", {"action": http("https://example.com/", "x")}, "2026-12-01")
    assert "placeholders" not in system.get(f"{COLLECTION}/jobs/Flag")["properties"]
    assert stored.json()["properties"]["placeholders"] is True


def test_a_storage_queue_message_carries_the_context(system: System) -> None:
    name = f"{system.settings.storage_prefix}-ctx"
    inbox = new_queue(system.settings, name)
    response = put(system, "Enqueue", {"action": {
        "type": "StorageQueue",
        "queueMessage": {
            "storageAccount": AZURITE_ACCOUNT, "queueName": name, "sasToken": sas_token(name),
            "message": '{"tag": "@{executionTag}", "due": "@{scheduledTime}"}',
        },
    }}, "2026-12-01")  # fmt: skip
    assert response.status_code == 201, response.text

    [report] = system.tick_and_execute()

    [message] = [m.content for m in inbox.receive_messages()]
    assert message == (f'{{"tag": "{report.execution_tag}", "due": "{e2e.T0.isoformat()[:19]}Z"}}')


def test_service_bus_messages_carry_the_identifiers_http_gets_as_headers(
    system: System, target: HttpTarget
) -> None:
    sent, _ = system.record_service_bus()
    auth = {"type": "SharedAccessKey", "sasKeyName": "send", "sasKey": "k3y"}
    for name, version in (("Bus", "2026-12-01"), ("Bus2016", "2016-03-01")):
        response = put(system, name, {"action": {
            "type": "ServiceBusQueue",
            "serviceBusQueueMessage": {
                "namespace": "contoso", "queueName": "orders", "authentication": auth,
                "message": "occurrence @{occurrence}",
                "customMessageProperties": {"kind": "nightly", "x-ms-execution-tag": "mine"},
            },
        }}, version)  # fmt: skip
        assert response.status_code == 201, response.text
    system.put(f"{COLLECTION}/jobs/Web", {"properties": {"action": http(target.url, "x")}})

    system.tick_and_execute()

    [headers] = [r.headers for r in target.requests]
    by_body = {str(m): m for m in sent}
    assert set(by_body) == {"occurrence 1", "occurrence @{occurrence}"}
    for message in sent:
        props = {k.decode() if isinstance(k, bytes) else k: v.decode() if isinstance(v, bytes)
                 else v for k, v in message.application_properties.items()}  # fmt: skip
        assert props["kind"] == "nightly"
        assert props["x-ms-execution-tag"] == message.message_id != "mine"
        assert props["x-ms-scheduler-expected-execution-time"] == "2026-03-04T09:00:00Z"
        assert props["x-ms-scheduler-jobid"].endswith(("/jobs/Bus", "/jobs/Bus2016"))
        shared = {k for k in props if k.startswith("x-ms-")}
        assert shared == {k.lower() for k in headers if k.lower().startswith("x-ms-")} - {
            "x-ms-client-request-id"
        }


def test_a_storage_queue_message_in_azure_schedulers_envelope(system: System) -> None:
    import xml.etree.ElementTree as ET

    name = f"{system.settings.storage_prefix}-envelope"
    inbox = new_queue(system.settings, name)
    queue_message = {
        "storageAccount": AZURITE_ACCOUNT, "queueName": name, "sasToken": sas_token(name),
        "message": "a < b, try @{attempt}", "envelope": True,
    }  # fmt: skip
    refused = put(system, "Wrapped", {"action": {
        "type": "StorageQueue", "queueMessage": queue_message}}, "2016-03-01")  # fmt: skip
    assert refused.status_code == 400
    assert refused.json()["error"]["target"] == "properties.action.queueMessage.envelope"
    response = put(system, "Wrapped", {"action": {
        "type": "StorageQueue", "queueMessage": queue_message}}, "2026-12-01")  # fmt: skip
    assert response.status_code == 201, response.text
    assert response.json()["properties"]["action"]["queueMessage"]["envelope"] is True

    [report] = system.tick_and_execute()

    [content] = [m.content for m in inbox.receive_messages()]
    assert content.startswith('<?xml version="1.0" encoding="utf-16"?><StorageQueueMessage ')
    root = ET.fromstring(content.encode("utf-16"))
    fields = {child.tag: child.text for child in root}
    assert fields["Message"] == "a < b, try 1"
    assert fields["ExecutionTag"] == report.execution_tag
    assert fields["ExpectedExecutionTime"] == "2026-03-04T09:00:00Z"
    assert fields["SchedulerJobId"].endswith("/jobs/Wrapped")
    assert fields["SchedulerJobCollectionId"].endswith("/jobCollections/Nightly")
    assert len(fields["ClientRequestId"]) == 36
