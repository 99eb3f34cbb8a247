"""The ServiceBusQueue and ServiceBusTopic actions: one message through azure-servicebus.

Authentication is the job's SharedAccessKey (`sasKeyName` + `sasKey`) or, with no
authentication (or type NotSpecified), the app's identity (`identity.app_credential`): in
Azure the managed identity holds a Service Bus Data Sender role, so no key needs to live in
the job. Identity-based sends reach only the namespaces `SCHEDULER_IDENTITY_SERVICEBUS_
NAMESPACES` allows (`destinations`, checked at PUT and again here); a SharedAccessKey
authentication without its key is refused, never silently turned into an identity send.
The namespace's address is checked by the egress policy before the SDK connects (AMQP
connections cannot be pinned to the checked address the way HTTP ones are; the host name
is built from a validated namespace name and the configured suffix).

Both `NetMessaging` (SBMP, which Microsoft retired) and `AMQP` are sent over AMQP, the only
protocol the SDK speaks. `forcePersistence` and `viaPartitionKey` have no AMQP equivalent;
when set they are named in the outcome message rather than dropped in silence.

The sender comes from `sender_factory` (default `open_sender`) so tests can stop at the
`ServiceBusSender.send_messages` boundary: no Service Bus emulator runs in this project's tests.
The SDK's own retries are off; the job's retryPolicy retries, and each attempt is recorded.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from azure.core.credentials import AzureNamedKeyCredential, TokenCredential
from azure.core.exceptions import AzureError
from azure.servicebus import ServiceBusClient, ServiceBusMessage, ServiceBusSender, TransportType

from scheduler_lib.actions import ACTION_TIMEOUT_SECONDS, ActionOutcome, ExecutionContext, require
from scheduler_lib.actions.destinations import check_action, uses_identity
from scheduler_lib.actions.egress import EgressDenied, EgressPolicy, policy_for
from scheduler_lib.actions.identity import app_credential
from scheduler_lib.config import Settings
from scheduler_lib.errors import ValidationError
from scheduler_lib.wire import readers
from scheduler_lib.wire.durations import parse_time_to_live

#: brokeredMessageProperties that map one-to-one onto ServiceBusMessage keyword arguments.
_PLAIN_PROPERTIES = {
    "contentType": "content_type",
    "correlationId": "correlation_id",
    "label": "subject",
    "messageId": "message_id",
    "partitionKey": "partition_key",
    "replyTo": "reply_to",
    "replyToSessionId": "reply_to_session_id",
    "sessionId": "session_id",
    "to": "to",
}
_UNSUPPORTED_PROPERTIES = ("forcePersistence", "viaPartitionKey")


@dataclass(frozen=True)
class ServiceBusTarget:
    """Where one message goes and with which credential; what a sender factory receives."""

    fully_qualified_namespace: str
    entity_kind: Literal["queue", "topic"]
    entity_name: str
    credential: AzureNamedKeyCredential | TokenCredential
    transport_type: TransportType = TransportType.Amqp
    egress: EgressPolicy | None = None  # checked by `open_sender` before it connects


SenderFactory = Callable[[ServiceBusTarget], AbstractContextManager[ServiceBusSender]]


@contextmanager
def open_sender(target: ServiceBusTarget) -> Iterator[ServiceBusSender]:
    """A sender for `target`. The sender is not entered (that would connect before sending);
    closing the client closes it."""
    if target.egress is not None:
        # An unknown host is left to the SDK, which reports it in its own words.
        with contextlib.suppress(socket.gaierror):
            target.egress.resolve(target.fully_qualified_namespace, 5671)
    with ServiceBusClient(
        target.fully_qualified_namespace,
        target.credential,
        transport_type=target.transport_type,
        retry_total=0,
    ) as client:
        if target.entity_kind == "queue":
            yield client.get_queue_sender(queue_name=target.entity_name)
        else:
            yield client.get_topic_sender(topic_name=target.entity_name)


def execute(
    action: Mapping[str, Any],
    context: ExecutionContext,
    settings: Settings,
    *,
    timeout: float = ACTION_TIMEOUT_SECONDS,
    sender_factory: SenderFactory = open_sender,
) -> ActionOutcome:
    """Send the action's Service Bus message once."""
    action_type = action["type"]
    if action_type == "ServiceBusQueue":
        path = "action.serviceBusQueueMessage"
        body = require(action, "serviceBusQueueMessage", "action")
        kind: Literal["queue", "topic"] = "queue"
        entity = require(body, "queueName", path)
    else:
        path = "action.serviceBusTopicMessage"
        body = require(action, "serviceBusTopicMessage", "action")
        kind = "topic"
        entity = require(body, "topicPath", path)
    check_action(action, settings)
    namespace = f"{require(body, 'namespace', path)}.{settings.servicebus_endpoint_suffix}"
    target = ServiceBusTarget(
        namespace, kind, entity, _credential(body, path, settings), egress=policy_for(settings)
    )
    message = build_message(
        body, path, default_message_id=context.execution_tag, identifiers=context.identifiers()
    )
    where = f"{kind} '{entity}' in namespace '{namespace}'"
    try:
        with sender_factory(target) as sender:
            sender.send_messages(message, timeout=timeout)
    except EgressDenied as exc:
        return ActionOutcome(
            False,
            f"{action_type} Action - Sending to {where} refused by the egress policy: "
            f"{exc.message}",
        )
    except (AzureError, ValueError, OSError) as exc:
        return ActionOutcome(
            False, f"{action_type} Action - Sending to {where} failed: {type(exc).__name__}: {exc}"
        )
    unapplied = [
        name
        for name in _UNSUPPORTED_PROPERTIES
        if (body.get("brokeredMessageProperties") or {}).get(name) not in (None, "", False)
    ]
    note = f" (not applied, no AMQP equivalent: {', '.join(unapplied)})" if unapplied else ""
    return ActionOutcome(True, f"{action_type} Action - Message sent to {where}{note}")


def build_message(
    body: Mapping[str, Any],
    path: str,
    *,
    default_message_id: str | None = None,
    identifiers: Mapping[str, str] | None = None,
) -> ServiceBusMessage:
    """The ServiceBusMessage for a ServiceBusMessage definition (`path` names it in errors).

    Without a `messageId` of its own, the message carries `default_message_id` (the
    executor passes the execution tag: one per occurrence, the same across its retries), so
    an entity with duplicate detection drops a resend of an occurrence the broker already
    took, e.g. after a send that timed out but went through. `identifiers` (the `x-ms-*`
    names and values HTTP targets get as headers) are added to the custom properties, and
    win over a custom property of the same name, as the headers do."""
    props = body.get("brokeredMessageProperties") or {}
    props_path = f"{path}.brokeredMessageProperties"
    kwargs: dict[str, Any] = {
        arg: props[name] for name, arg in _PLAIN_PROPERTIES.items() if props.get(name)
    }
    if "message_id" not in kwargs and default_message_id:
        kwargs["message_id"] = default_message_id
    if props.get("timeToLive"):
        kwargs["time_to_live"] = parse_time_to_live(
            props["timeToLive"], field=f"{props_path}.timeToLive"
        )
    if props.get("scheduledEnqueueTimeUtc"):
        kwargs["scheduled_enqueue_time_utc"] = _utc(
            props["scheduledEnqueueTimeUtc"], f"{props_path}.scheduledEnqueueTimeUtc"
        )
    custom: dict[str | bytes, Any] = {**(body.get("customMessageProperties") or {})}
    custom.update(identifiers or {})
    try:
        return ServiceBusMessage(
            body.get("message") or "",
            application_properties=custom or None,
            **kwargs,
        )
    except (TypeError, ValueError) as exc:  # e.g. a partitionKey that differs from sessionId
        raise ValidationError(props_path, str(exc)) from None


def _utc(value: str, field: str) -> datetime:
    """The stored instant, read as the job's validation read it (`readers.instant`): a value
    stored before that checked its range fails this attempt naming the field, not the
    executor."""
    return readers.instant(value, field)


def _credential(
    body: Mapping[str, Any], path: str, settings: Settings
) -> AzureNamedKeyCredential | TokenCredential:
    if uses_identity(body):
        return app_credential(settings.storage_client_id)
    auth = body["authentication"]
    name = require(auth, "sasKeyName", f"{path}.authentication")
    return AzureNamedKeyCredential(name, require(auth, "sasKey", f"{path}.authentication"))
