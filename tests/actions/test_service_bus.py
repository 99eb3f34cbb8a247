"""ServiceBusQueue / ServiceBusTopic actions, up to the SDK's `ServiceBusSender.send_messages`.

No Service Bus emulator runs here. These tests use the real `open_sender` (a real
`ServiceBusClient` and a real `ServiceBusSender`, which connect only when sending) and replace
only `send_messages` on that sender instance with a recorder, so everything our code builds,
the real SDK's `ServiceBusMessage` included, is checked at the boundary. One test lets the
unpatched SDK try a namespace that cannot resolve, to prove real SDK errors become outcomes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from azure.core.credentials import AzureNamedKeyCredential
from azure.identity import DefaultAzureCredential
from azure.servicebus import ServiceBusMessage, ServiceBusSender, TransportType
from azure.servicebus.exceptions import (
    MessageSizeExceededError,
    OperationTimeoutError,
    ServiceBusAuthenticationError,
    ServiceBusConnectionError,
)

from scheduler_lib.actions import ActionOutcome, ExecutionContext, run_action
from scheduler_lib.actions.service_bus import ServiceBusTarget, open_sender
from scheduler_lib.config import Settings

CONTEXT = ExecutionContext("job", "collection", datetime(2024, 3, 1, tzinfo=UTC), "tag")
SAS_KEY = "c2FzLWtleS1zZWNyZXQtdmFsdWU="


@dataclass
class Sent:
    target: ServiceBusTarget
    sender: ServiceBusSender
    message: ServiceBusMessage
    kwargs: dict[str, Any]


class Recorder:
    """A sender factory: the real `open_sender`, with `send_messages` recorded (or failing)."""

    def __init__(self, error: Exception | None = None) -> None:
        self.sent: list[Sent] = []
        self.error = error

    @contextmanager
    def __call__(self, target: ServiceBusTarget) -> Iterator[ServiceBusSender]:
        with open_sender(target) as sender:

            def send_messages(message: ServiceBusMessage, **kwargs: Any) -> None:
                self.sent.append(Sent(target, sender, message, kwargs))
                if self.error:
                    raise self.error

            sender.send_messages = send_messages  # type: ignore[method-assign]
            yield sender


def queue_action(**overrides: Any) -> dict[str, Any]:
    message = {
        "queueName": "orders",
        "namespace": "contoso-bus",
        "transportType": "NetMessaging",
        "authentication": {"type": "SharedAccessKey", "sasKeyName": "QPolicy", "sasKey": SAS_KEY},
        "message": "Some message",
        "brokeredMessageProperties": {},
        "customMessageProperties": {"appname": "FromScheduler"},
    }
    message.update(overrides)
    return {"type": "ServiceBusQueue", "serviceBusQueueMessage": message}


def run(
    action: dict[str, Any],
    recorder: Callable[..., Any] | None = None,
    settings: Settings | None = None,
) -> ActionOutcome:
    adapters = {"sender_factory": recorder} if recorder else {}
    return run_action(action, CONTEXT, settings or Settings(), **adapters)


def test_queue_message_with_every_brokered_property() -> None:
    recorder = Recorder()
    props = {
        "contentType": "application/json",
        "correlationId": "corr-1",
        "label": "nightly",
        "messageId": "msg-1",
        "partitionKey": "session-a",
        "replyTo": "replies",
        "replyToSessionId": "reply-session",
        "scheduledEnqueueTimeUtc": "2024-03-01T10:05:00Z",
        "sessionId": "session-a",
        "timeToLive": "PT10M",
        "to": "someone",
    }
    outcome = run(queue_action(brokeredMessageProperties=props), recorder)
    assert outcome == ActionOutcome(
        True,
        "ServiceBusQueue Action - Message sent to queue 'orders' "
        "in namespace 'contoso-bus.servicebus.windows.net'",
    )
    [sent] = recorder.sent
    assert sent.kwargs == {"timeout": 60.0}
    assert (sent.sender.fully_qualified_namespace, sent.sender.entity_name) == (
        "contoso-bus.servicebus.windows.net",
        "orders",
    )
    message = sent.message
    assert isinstance(message, ServiceBusMessage)
    assert str(message) == "Some message"
    assert message.application_properties == {"appname": "FromScheduler", **CONTEXT.identifiers()}
    assert (message.content_type, message.correlation_id, message.subject) == (
        "application/json",
        "corr-1",
        "nightly",
    )
    assert (message.message_id, message.partition_key, message.session_id) == (
        "msg-1",
        "session-a",
        "session-a",
    )
    assert (message.reply_to, message.reply_to_session_id, message.to) == (
        "replies",
        "reply-session",
        "someone",
    )
    assert message.scheduled_enqueue_time_utc == datetime(2024, 3, 1, 10, 5, tzinfo=UTC)
    assert message.time_to_live == timedelta(minutes=10)


def test_shared_access_key_credential() -> None:
    recorder = Recorder()
    run(queue_action(), recorder)
    credential = recorder.sent[0].target.credential
    assert isinstance(credential, AzureNamedKeyCredential)
    assert (credential.named_key.name, credential.named_key.key) == ("QPolicy", SAS_KEY)


ALLOWED = replace(Settings(), identity_servicebus_namespaces=("Contoso-Bus",))


@pytest.mark.parametrize(
    "authentication",
    [
        pytest.param(None, id="no-authentication"),
        pytest.param({"type": "NotSpecified"}, id="not-specified"),
    ],
)
def test_without_authentication_uses_the_app_identity_for_allowed_namespaces(
    authentication: Any,
) -> None:
    recorder = Recorder()
    assert run(queue_action(authentication=authentication), recorder, ALLOWED).succeeded
    assert isinstance(recorder.sent[0].target.credential, DefaultAzureCredential)


def test_the_app_identity_reaches_no_other_namespace() -> None:
    """Re-checked when the action runs: the setting may have changed since the PUT."""
    recorder = Recorder()
    for settings in (Settings(), ALLOWED):
        action = queue_action(authentication=None, namespace="someone-elses-bus")
        outcome = run(action, recorder, settings)
        assert not outcome.succeeded
        assert "action.serviceBusQueueMessage.authentication: is required" in outcome.message
        assert "SCHEDULER_IDENTITY_SERVICEBUS_NAMESPACES" in outcome.message
    assert recorder.sent == []


def test_shared_access_key_without_its_key_is_refused_not_sent_with_the_identity() -> None:
    recorder = Recorder()
    auth = {"type": "SharedAccessKey", "sasKeyName": "QPolicy"}
    outcome = run(queue_action(authentication=auth), recorder, ALLOWED)
    assert not outcome.succeeded
    assert "action.serviceBusQueueMessage.authentication.sasKey: is required" in outcome.message
    assert recorder.sent == []


def test_topic_message_goes_to_the_topic_sender() -> None:
    recorder = Recorder()
    action = {
        "type": "ServiceBusTopic",
        "serviceBusTopicMessage": {
            "topicPath": "events",
            "namespace": "contoso-bus",
            "transportType": "AMQP",
            "message": "topic body",
            "customMessageProperties": {"kind": "tick", "n": "1"},
        },
    }
    settings = replace(ALLOWED, servicebus_endpoint_suffix="servicebus.chinacloudapi.cn")
    outcome = run(action, recorder, settings)
    assert outcome.message == (
        "ServiceBusTopic Action - Message sent to topic 'events' "
        "in namespace 'contoso-bus.servicebus.chinacloudapi.cn'"
    )
    [sent] = recorder.sent
    assert (sent.target.entity_kind, sent.sender.entity_name) == ("topic", "events")
    assert str(sent.message) == "topic body"
    identifiers = CONTEXT.identifiers()
    assert sent.message.application_properties == {"kind": "tick", "n": "1", **identifiers}


@pytest.mark.parametrize("transport", ["NetMessaging", "AMQP", "NotSpecified", None])
def test_every_transport_type_is_sent_over_amqp(transport: str | None) -> None:
    recorder = Recorder()
    run(queue_action(transportType=transport), recorder)
    assert recorder.sent[0].target.transport_type is TransportType.Amqp


@pytest.mark.parametrize(
    ("time_to_live", "expected"),
    [
        pytest.param("PT1H30M", timedelta(hours=1, minutes=30), id="iso-8601"),
        pytest.param("00:05:00", timedelta(minutes=5), id="timespan"),
        # the SDK sends whole seconds (AMQP ttl is whole milliseconds of whole seconds)
        pytest.param(
            "1.02:03:04.5000000",
            timedelta(days=1, hours=2, minutes=3, seconds=4),
            id="timespan-days-fraction",
        ),
    ],
)
def test_time_to_live_forms(time_to_live: str, expected: timedelta) -> None:
    recorder = Recorder()
    run(queue_action(brokeredMessageProperties={"timeToLive": time_to_live}), recorder)
    assert recorder.sent[0].message.time_to_live == expected


def test_properties_without_an_amqp_equivalent_are_named_not_dropped() -> None:
    props = {"forcePersistence": True, "viaPartitionKey": "via"}
    outcome = run(queue_action(brokeredMessageProperties=props), Recorder())
    assert outcome.succeeded
    assert outcome.message.endswith(
        "(not applied, no AMQP equivalent: forcePersistence, viaPartitionKey)"
    )


@pytest.mark.parametrize(
    ("props", "authentication", "field"),
    [
        pytest.param(
            {"timeToLive": "soon"},
            None,
            "brokeredMessageProperties.timeToLive",
            id="bad-time-to-live",
        ),
        pytest.param(
            {"scheduledEnqueueTimeUtc": "tomorrow"},
            None,
            "brokeredMessageProperties.scheduledEnqueueTimeUtc",
            id="bad-enqueue-time",
        ),
        # Stored before its range was checked: year 0 in UTC fails this attempt, not the run.
        pytest.param(
            {"scheduledEnqueueTimeUtc": "0001-01-01T00:00:00+14:00"},
            None,
            "brokeredMessageProperties.scheduledEnqueueTimeUtc",
            id="enqueue-time-before-year-1-in-utc",
        ),
        pytest.param(
            {"sessionId": "a", "partitionKey": "b"},
            None,
            "brokeredMessageProperties",
            id="partition-key-not-session-id",
        ),
        pytest.param(
            {},
            {"type": "SharedAccessKey", "sasKey": SAS_KEY},
            "authentication.sasKeyName",
            id="key-without-key-name",
        ),
    ],
)
def test_bad_definitions_fail_naming_the_field_and_send_nothing(
    props: dict[str, Any], authentication: Any, field: str
) -> None:
    recorder = Recorder()
    overrides: dict[str, Any] = {"brokeredMessageProperties": props}
    if authentication:
        overrides["authentication"] = authentication
    outcome = run(queue_action(**overrides), recorder)
    assert not outcome.succeeded
    assert f"action.serviceBusQueueMessage.{field}" in outcome.message
    assert recorder.sent == []


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(ServiceBusConnectionError(message="connection lost"), id="connection"),
        pytest.param(ServiceBusAuthenticationError(message=f"bad key {SAS_KEY}"), id="auth"),
        pytest.param(OperationTimeoutError(message="timed out"), id="timeout"),
        pytest.param(MessageSizeExceededError(message="too big"), id="too-large"),
    ],
)
def test_failing_sender_is_a_failed_outcome(error: Exception) -> None:
    recorder = Recorder(error)
    outcome = run(queue_action(), recorder)
    assert not outcome.succeeded
    assert outcome.message.startswith(
        "ServiceBusQueue Action - Sending to queue 'orders' in namespace "
        f"'contoso-bus.servicebus.windows.net' failed: {type(error).__name__}: "
    )
    assert SAS_KEY not in outcome.message
    assert len(recorder.sent) == 1


def test_real_sdk_error_is_a_failed_outcome() -> None:
    """The unpatched SDK against a namespace that cannot resolve (`.invalid`, RFC 6761)."""
    settings = replace(Settings(), servicebus_endpoint_suffix="invalid")
    outcome = run_action(queue_action(), CONTEXT, settings, timeout=5)
    assert not outcome.succeeded
    assert "failed: ServiceBusConnectionError" in outcome.message


@pytest.mark.parametrize(
    ("properties", "expected_id"),
    [
        pytest.param({}, "tag", id="execution-tag-by-default"),
        pytest.param({"messageId": "order-42"}, "order-42", id="own-message-id-wins"),
    ],
)
def test_message_id_defaults_to_the_execution_tag(
    properties: dict[str, Any], expected_id: str
) -> None:
    """One id per occurrence, the same across its retries: an entity with duplicate detection
    drops the resend of a message the broker already took."""
    recorder = Recorder()
    run(queue_action(brokeredMessageProperties=properties), recorder)
    [sent] = recorder.sent
    assert sent.message.message_id == expected_id


def test_a_stored_namespace_that_is_not_a_name_never_reaches_the_sdk() -> None:
    """A job stored before namespaces were validated: `127.0.0.1/` made the SDK open TLS to
    127.0.0.1:5671 and offer the app identity's token there. Refused at run time too."""
    recorder = Recorder()
    outcome = run(queue_action(namespace="127.0.0.1/"), recorder, ALLOWED)
    assert not outcome.succeeded
    assert "action.serviceBusQueueMessage.namespace: must be a Service Bus namespace name" in (
        outcome.message
    )
    assert recorder.sent == []
