"""Write-only secrets of an action: redaction on output, carry-over on update, derivation.

Secrets (Basic and client-certificate passwords, `pfx`, OAuth `secret`, `sasToken`, Service
Bus `sasKey`) are stored because the executor needs them, and never returned. A client that
reads a job and writes it back (the SDK's GET-modify-PUT) therefore sends it without its
secrets; `carry_over` gives such an update the stored secret again, but only when the object
still names the same principal (same auth type, same username / tenant+clientId+audience /
storage account / namespace+key name) *and* the same destination (the request URI's scheme,
host and port, for every authentication type of an HTTP request). A Basic password carried
over to a URI that now names another host would be handed to that host, and so would the
token an OAuth secret buys (the secret itself goes to the authority, but the token is as
good as the secret for its audience). So pointing a job (or its errorAction) elsewhere
without re-sending the secret is a 400 naming the secret, never a silent reuse of the old
one. `ManagedServiceIdentity` stores no secret: a URI moved to another host passes the
audience's host check again (`actions.destinations.check_identity`, on every PUT and PATCH).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from scheduler_lib.errors import ValidationError
from scheduler_lib.timeutil import iso_z
from scheduler_lib.wire import notifications
from scheduler_lib.wire.shapes import JSON, JSONObject, as_object


class Holder(NamedTuple):
    """An object in an action that holds secrets, and how to read them."""

    kind: str
    path: str  # JSON path of `node` (relative to the job properties)
    node: JSONObject
    secrets: tuple[str, ...]  # dotted paths inside `node`
    identity: tuple[str, ...]  # dotted paths inside `node` that must match to carry over
    required: tuple[str, ...]  # secrets the executor cannot do without
    destination: tuple[Any, ...] = ()  # where the secret is sent; must match to carry over


_AUTH = {
    "Basic": (("password",), ("username",), ("password",)),
    "ClientCertificate": (("pfx", "password"), (), ("pfx",)),
    "ActiveDirectoryOAuth": (("secret",), ("tenant", "clientId", "audience"), ("secret",)),
}
_SB = ("serviceBusQueueMessage", "serviceBusTopicMessage")


def holders(action: JSON, path: str = "action") -> Iterator[Holder]:
    """Every secret-holding object of a (normalized) action and of its errorAction (none
    when `action` is absent)."""
    if not isinstance(action, dict) or not action:
        return
    request = as_object(action.get("request"))
    auth = as_object(request.get("authentication"))
    kind = auth.get("type")
    if isinstance(kind, str) and kind in _AUTH:
        secrets, identity, required = _AUTH[kind]
        # What the secret proves (a Basic header, a certificate, an OAuth token) goes to the
        # request URI for every type: a host change is a destination change.
        yield Holder(
            kind,
            f"{path}.request.authentication",
            auth,
            secrets,
            ("type", *identity),
            required,
            origin(request.get("uri")),
        )
    queue_message = action.get("queueMessage")
    if isinstance(queue_message, dict) and queue_message:
        yield Holder(
            "queueMessage",
            f"{path}.queueMessage",
            queue_message,
            ("sasToken",),
            ("storageAccount",),
            (),  # without one, the app's identity sends (`actions.destinations`)
        )
    for name in _SB:
        message = action.get(name)
        if isinstance(message, dict) and message:
            yield Holder(
                "serviceBus",
                f"{path}.{name}",
                message,
                ("authentication.sasKey",),
                ("namespace", "authentication.sasKeyName"),
                (),  # required for SharedAccessKey only: `actions.destinations` checks it
            )
    yield from holders(action.get("errorAction"), f"{path}.errorAction")


def origin(uri: Any) -> tuple[str, str, int | None]:
    """(scheme, host, port) of an http(s) URI, with the scheme's default port filled in, so
    that `https://a/` and `https://A:443/x` are the same destination."""
    try:
        parts = urlsplit(uri if isinstance(uri, str) else "")
        port = parts.port
    except ValueError:
        return ("", str(uri), None)
    scheme = parts.scheme.lower()
    return (scheme, (parts.hostname or "").lower(), port or _DEFAULT_PORTS.get(scheme))


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _get(node: JSONObject, dotted: str) -> JSON:
    value: JSON = node
    for part in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _set(node: JSONObject, dotted: str, value: JSON) -> None:
    *parents, last = dotted.split(".")
    for part in parents:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise TypeError(f"{part} holds no object")  # a canonical action always does
        node = child
    node[last] = value


def _pop(node: JSONObject, dotted: str) -> None:
    *parents, last = dotted.split(".")
    for part in parents:
        node = as_object(node.get(part))
    node.pop(last, None)


def redact(properties: JSONObject) -> JSONObject:
    """A deep copy of job properties without any secret (what the API returns)."""
    result = notifications.redact(copy.deepcopy(properties))
    for holder in holders(result.get("action")):
        for secret in holder.secrets:
            _pop(holder.node, secret)
    return result


def carry_over(new: JSON, old: JSON) -> None:
    """Fill secrets omitted from `new` (an action) from `old`, in place, where the holder at
    the same place names the same principal and destination; see the module docstring.

    Raises ValidationError naming the secret when one was stored, is omitted now, and the
    principal or destination changed: the client must send it again."""
    if not old:
        return
    previous = {h.path: h for h in holders(old)}
    for holder in holders(new):
        before = previous.get(holder.path)
        if before is None or before.kind != holder.kind or not _uses_secrets(holder):
            continue
        given = [s for s in holder.secrets if _get(holder.node, s) is not None]
        if holder.kind == "ClientCertificate" and "pfx" in given:
            continue  # a new certificate: its password is the one sent (or none)
        stored = [s for s in holder.secrets if s not in given and _get(before.node, s) is not None]
        if not stored:
            continue
        if _same_target(holder, before):
            for secret in stored:
                _set(holder.node, secret, _get(before.node, secret))
            continue
        missing = next((s for s in holder.required if s in stored), stored[0])
        raise ValidationError(
            f"properties.{holder.path}.{missing}",
            f"must be sent again: the stored one was for {_describe(before)}, this definition "
            f"names {_describe(holder)} (a stored secret is reused only for the same principal "
            "and destination; a definition read with GET carries no secrets)",
        )


def _uses_secrets(holder: Holder) -> bool:
    """False for a queue or Service Bus message that authenticates with the app's identity
    (no `authentication` object, or type NotSpecified): nothing to carry over."""
    if holder.kind != "serviceBus":
        return True
    auth = as_object(holder.node.get("authentication"))
    return bool(auth) and auth.get("type") != "NotSpecified"


def _same_target(holder: Holder, before: Holder) -> bool:
    return holder.destination == before.destination and all(
        _get(holder.node, k) == _get(before.node, k) for k in holder.identity
    )


def _describe(holder: Holder) -> str:
    parts = [f"{k}={_get(holder.node, k)!r}" for k in holder.identity if k != "type"]
    if holder.destination:
        scheme, host, port = holder.destination
        parts.append(f"destination {scheme}://{host}:{port}")
    return ", ".join(parts) or holder.kind


Describe = Callable[..., Any]


def finalize(action: JSON, describe: Describe) -> None:
    """Check that every required secret is there and derive a certificate's description
    (thumbprint, subject, expiry) from its pfx, in place. `describe` is
    `actions.client_certificate.describe_certificate` (it raises ValidationError)."""
    for holder in holders(action):
        for secret in holder.required:
            if not _get(holder.node, secret):
                raise ValidationError(f"properties.{holder.path}.{secret}", "is required")
        if holder.kind == "ClientCertificate":
            node = holder.node
            info = describe(
                node["pfx"], node.get("password"), field=f"properties.{holder.path}.pfx"
            )
            node["certificateThumbprint"] = info.thumbprint
            node["certificateSubjectName"] = info.subject
            expiry: datetime = info.expiry
            node["certificateExpirationDate"] = iso_z(expiry)
