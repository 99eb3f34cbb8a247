"""Job actions on the wire: validation into the canonical stored form, and redaction.

The stored form is what the executor reads: canonical key names, PascalCase enums, the
retry policy's defaults filled in (`retry_policy`: Fixed, PT30S, 4 retries, as Azure
Scheduler documented)
and, for a client certificate, its thumbprint, subject and expiry derived from the pfx.
Only the sub-object that matches `type` may be present: a `queueMessage` on an Http action
would be silently ignored, so it is refused instead.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from scheduler_lib.errors import ValidationError
from scheduler_lib.wire import extensions, managed_identity, readers, targets
from scheduler_lib.wire.headers import request_headers
from scheduler_lib.wire.retry_policy import DEFAULT_RETRY, retry_policy_source
from scheduler_lib.wire.shapes import JSONObject, as_object, json_object
from scheduler_lib.wire.versions import DEFAULT_VERSION, ApiVersion, Location

ACTION_TYPES = ("Http", "Https", "StorageQueue", "ServiceBusQueue", "ServiceBusTopic")
AUTH_TYPES = ("NotSpecified", "ClientCertificate", "ActiveDirectoryOAuth", "Basic")
HTTP_METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS")
TRANSPORT_TYPES = ("NotSpecified", "NetMessaging", "AMQP")
SB_AUTH_TYPES = ("NotSpecified", "SharedAccessKey")

#: Read-only: derived from the pfx; a value sent back (as read) is ignored. A 2016-03-01
#: answer writes the expiry under both of its names (`dialect`).
CERT_DERIVED = (
    "certificateThumbprint",
    "certificateSubjectName",
    "certificateExpirationDate",
    "certificateExpiration",
)
_PAYLOAD = {
    "Http": "request",
    "Https": "request",
    "StorageQueue": "queueMessage",
    "ServiceBusQueue": "serviceBusQueueMessage",
    "ServiceBusTopic": "serviceBusTopicMessage",
}
_PAYLOADS = ("request", "queueMessage", "serviceBusQueueMessage", "serviceBusTopicMessage")
_BROKERED = (
    "contentType",
    "correlationId",
    "forcePersistence",
    "label",
    "messageId",
    "partitionKey",
    "replyTo",
    "replyToSessionId",
    "scheduledEnqueueTimeUtc",
    "sessionId",
    "timeToLive",
    "to",
    "viaPartitionKey",
)
MAX_BODY = 8192


def normalize_action(
    value: Any, path: str, *, error_action: bool = False, version: ApiVersion = DEFAULT_VERSION
) -> JSONObject:
    """The canonical stored form of `action` (or of `action.errorAction`); `version`
    decides which extension properties are known (`extensions`)."""
    scope = extensions.Scope(version, error_action)
    allowed = ["type", *_PAYLOADS, "retryPolicy"] + ([] if error_action else ["errorAction"])
    source = readers.keys(value, path, [*allowed, *scope.names(Location.ACTION)])
    if "type" not in source:
        raise ValidationError(readers.join(path, "type"), "is required")
    kind = readers.enum(source["type"], readers.join(path, "type"), ACTION_TYPES)
    payload = _PAYLOAD[kind]
    for other in _PAYLOADS:
        if other != payload and source.get(other) is not None:
            raise ValidationError(readers.join(path, other), f"does not apply to a {kind} action")
    if source.get(payload) is None:
        raise ValidationError(readers.join(path, payload), f"is required for a {kind} action")
    action: JSONObject = {"type": kind}
    where = readers.join(path, payload)
    policy = retry_policy_source(source, payload, path, scope)
    if payload == "request":
        request = dict(readers.obj(source[payload], where))
        request.pop("retryPolicy", None)
        action[payload] = _request(request, where, scope, https_only=kind == "Https")
    elif payload == "queueMessage":
        action[payload] = _queue_message(source[payload], where, scope)
    else:
        action[payload] = _service_bus(source[payload], where, topic=kind == "ServiceBusTopic")
    if not error_action or policy is not None:
        # An errorAction without a policy of its own runs under the main action's (the
        # executor looks it up there), so no default is stored for it.
        action["retryPolicy"] = policy if policy is not None else dict(DEFAULT_RETRY)
    if source.get("errorAction") is not None:
        where = readers.join(path, "errorAction")
        action["errorAction"] = normalize_action(
            source["errorAction"], where, error_action=True, version=version
        )
    action.update(scope.read(Location.ACTION, source, path))
    return action


def _request(value: Any, path: str, scope: extensions.Scope, *, https_only: bool) -> JSONObject:
    known = ("uri", "method", "body", "headers", "authentication")
    source = readers.keys(value, path, known + scope.names(Location.REQUEST))
    for name in ("uri", "method"):
        if source.get(name) is None:
            raise ValidationError(readers.join(path, name), "is required")
    uri = targets.http_uri(source["uri"], readers.join(path, "uri"), https_only=https_only)
    request: JSONObject = {
        "uri": uri,
        "method": readers.enum(
            source["method"].upper() if isinstance(source["method"], str) else None,
            readers.join(path, "method"),
            HTTP_METHODS,
        ),
    }
    if source.get("body") is not None:
        request["body"] = readers.string(
            source["body"], readers.join(path, "body"), max_length=MAX_BODY, empty=True
        )
    if source.get("headers") is not None:
        request["headers"] = json_object(
            request_headers(source["headers"], readers.join(path, "headers"))
        )
    if source.get("authentication") is not None:
        where = readers.join(path, "authentication")
        auth = _authentication(source["authentication"], where, scope)
        if auth is not None:
            request["authentication"] = auth
    request.update(scope.read(Location.REQUEST, source, path))
    return request


def _authentication(value: Any, path: str, scope: extensions.Scope) -> JSONObject | None:
    source = readers.obj(value, path)
    type_key = next((k for k in source if k.lower() == "type"), None)
    if type_key is None:
        raise ValidationError(readers.join(path, "type"), "is required")
    types = extensions.choices(Location.AUTHENTICATION, "type", AUTH_TYPES, scope.version)
    kind = readers.enum(source[type_key], readers.join(path, "type"), types)
    fields = {
        "NotSpecified": (),
        "Basic": ("username", "password"),
        "ActiveDirectoryOAuth": ("tenant", "audience", "clientId", "secret"),
        "ClientCertificate": ("pfx", "password", *CERT_DERIVED),
        managed_identity.TYPE: managed_identity.FIELDS,  # only 2026-12-01 offers the type
    }.get(kind, ())  # an extension type's other fields are its extension properties
    source = readers.keys(source, path, ("type", *fields, *scope.names(Location.AUTHENTICATION)))
    if kind == "NotSpecified":
        return None
    auth: JSONObject = {"type": kind}
    for name in fields:
        if name in CERT_DERIVED:
            continue  # read-only: derived from the pfx below; a round-tripped value is ignored
        if source.get(name) is not None:
            where = readers.join(path, name)
            auth[name] = readers.string(source[name], where, empty=name == "password")
    auth.update(scope.read(Location.AUTHENTICATION, source, path))
    if kind == managed_identity.TYPE:
        managed_identity.check(auth, path)
    return auth


def _queue_message(value: Any, path: str, scope: extensions.Scope) -> JSONObject:
    known = ("storageAccount", "queueName", "sasToken", "message")
    source = readers.keys(value, path, known + scope.names(Location.QUEUE_MESSAGE))
    message: JSONObject = {}
    for name in ("storageAccount", "queueName", "sasToken"):
        if source.get(name) is not None:
            message[name] = readers.string(source[name], readers.join(path, name), max_length=2048)
    for name in ("storageAccount", "queueName"):
        if name not in message:
            raise ValidationError(readers.join(path, name), "is required")
    account_path = readers.join(path, "storageAccount")
    message["storageAccount"] = targets.storage_account(message["storageAccount"], account_path)
    if source.get("message") is not None:
        message["message"] = readers.string(
            source["message"], readers.join(path, "message"), max_length=MAX_BODY, empty=True
        )
    return {**message, **scope.read(Location.QUEUE_MESSAGE, source, path)}


def _service_bus(value: Any, path: str, *, topic: bool) -> JSONObject:
    target = "topicPath" if topic else "queueName"
    source = readers.keys(
        value,
        path,
        (
            target,
            "namespace",
            "authentication",
            "message",
            "brokeredMessageProperties",
            "customMessageProperties",
            "transportType",
        ),
    )
    message: JSONObject = {}
    for name in (target, "namespace"):
        if source.get(name) is None:
            raise ValidationError(readers.join(path, name), "is required")
        message[name] = readers.string(source[name], readers.join(path, name), max_length=260)
    message["namespace"] = targets.servicebus_namespace(
        message["namespace"], readers.join(path, "namespace")
    )
    if source.get("message") is not None:
        message["message"] = readers.string(
            source["message"], readers.join(path, "message"), max_length=MAX_BODY, empty=True
        )
    if source.get("transportType") is not None:
        message["transportType"] = readers.enum(
            source["transportType"], readers.join(path, "transportType"), TRANSPORT_TYPES
        )
    if source.get("customMessageProperties") is not None:
        message["customMessageProperties"] = json_object(
            readers.string_map(
                source["customMessageProperties"], readers.join(path, "customMessageProperties")
            )
        )
    if source.get("brokeredMessageProperties") is not None:
        message["brokeredMessageProperties"] = _brokered(
            source["brokeredMessageProperties"], readers.join(path, "brokeredMessageProperties")
        )
    auth_path = readers.join(path, "authentication")
    auth_keys = ("type", "sasKeyName", "sasKey")
    auth = readers.keys(source.get("authentication") or {}, auth_path, auth_keys)
    if auth:
        normalized: JSONObject = {
            "type": readers.enum(
                auth.get("type", "SharedAccessKey"), readers.join(auth_path, "type"), SB_AUTH_TYPES
            )
        }
        for name in ("sasKeyName", "sasKey"):
            if auth.get(name) is not None:
                normalized[name] = readers.string(auth[name], readers.join(auth_path, name))
        message["authentication"] = normalized
    return message


def _brokered(value: Any, path: str) -> JSONObject:
    result: JSONObject = {}
    for name, item, where in readers.present(value, path, _BROKERED):
        if name == "forcePersistence":
            result[name] = readers.boolean(item, where)
        elif name == "timeToLive":
            result[name] = readers.duration(item, where, low=timedelta(seconds=1))
        elif name == "scheduledEnqueueTimeUtc":
            result[name] = readers.instant_string(item, where)
        else:
            result[name] = readers.string(item, where, max_length=256, empty=True)
    return result


def uses_authentication(action: JSONObject) -> bool:
    """Whether an action (or its errorAction) authenticates outbound (not on Free)."""
    if as_object(action.get("request")).get("authentication"):
        return True
    error = action.get("errorAction")
    return isinstance(error, dict) and bool(error) and uses_authentication(error)
