"""Write-only secrets of an action: redaction on output, carry-over on update, derivation.

Secrets (Basic and client-certificate passwords, `pfx`, OAuth `secret`, `sasToken`, Service
Bus `sasKey`) are stored because the executor needs them, and never returned. A client that
reads a job and writes it back (the SDK's GET-modify-PUT) therefore sends it without its
secrets; `carry_over` gives such an update the stored secret again, but only when the object
still names the same principal or target (same auth type, same username / tenant+clientId+
audience / storage account / namespace+key name). Pointing a job at another account without
giving that account's secret is an error, never a silent reuse of the old one.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any, NamedTuple

from scheduler_lib.errors import ValidationError
from scheduler_lib.model import wire


class Holder(NamedTuple):
    """An object in an action that holds secrets, and how to read them."""

    kind: str
    path: str  # JSON path of `node` (relative to the job properties)
    node: dict[str, Any]
    secrets: tuple[str, ...]  # dotted paths inside `node`
    identity: tuple[str, ...]  # dotted paths inside `node` that must match to carry over
    required: tuple[str, ...]  # secrets the executor cannot do without


_AUTH = {
    "Basic": (("password",), ("username",), ("password",)),
    "ClientCertificate": (("pfx", "password"), (), ("pfx",)),
    "ActiveDirectoryOAuth": (("secret",), ("tenant", "clientId", "audience"), ("secret",)),
}
_SB = ("serviceBusQueueMessage", "serviceBusTopicMessage")


def holders(action: dict[str, Any] | None, path: str = "action") -> Iterator[Holder]:
    """Every secret-holding object of a (normalized) action and of its errorAction."""
    if not action:
        return
    auth = (action.get("request") or {}).get("authentication")
    if auth and auth.get("type") in _AUTH:
        secrets, identity, required = _AUTH[auth["type"]]
        yield Holder(
            auth["type"],
            f"{path}.request.authentication",
            auth,
            secrets,
            ("type", *identity),
            required,
        )
    if action.get("queueMessage"):
        yield Holder(
            "queueMessage",
            f"{path}.queueMessage",
            action["queueMessage"],
            ("sasToken",),
            ("storageAccount",),
            ("sasToken",),
        )
    for name in _SB:
        if action.get(name):
            yield Holder(
                "serviceBus",
                f"{path}.{name}",
                action[name],
                ("authentication.sasKey",),
                ("namespace", "authentication.sasKeyName"),
                ("authentication.sasKey",),
            )
    yield from holders(action.get("errorAction"), f"{path}.errorAction")


def _get(node: dict[str, Any], dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(part)  # type: ignore[assignment]
    return node


def _set(node: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value


def _pop(node: dict[str, Any], dotted: str) -> None:
    *parents, last = dotted.split(".")
    for part in parents:
        node = node.get(part) or {}
    node.pop(last, None)


def redact(properties: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of job properties without any secret (what the API returns)."""
    result = copy.deepcopy(properties)
    for holder in holders(result.get("action")):
        for secret in holder.secrets:
            _pop(holder.node, secret)
    return result


def carry_over(new: dict[str, Any], old: dict[str, Any] | None) -> None:
    """Fill secrets omitted from `new` (an action) from `old`, in place, where the holder at
    the same place names the same principal; see the module docstring."""
    if not old:
        return
    previous = {h.path: h for h in holders(old)}
    for holder in holders(new):
        before = previous.get(holder.path)
        if before is None or before.kind != holder.kind:
            continue
        if any(_get(holder.node, k) != _get(before.node, k) for k in holder.identity):
            continue
        given = [s for s in holder.secrets if _get(holder.node, s) is not None]
        if holder.kind == "ClientCertificate" and "pfx" in given:
            continue  # a new certificate: its password is the one sent (or none)
        for secret in holder.secrets:
            if secret not in given and _get(before.node, secret) is not None:
                _set(holder.node, secret, _get(before.node, secret))


Describe = Callable[..., Any]


def finalize(action: dict[str, Any], describe: Describe) -> None:
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
            node["certificateExpirationDate"] = wire.iso_utc(expiry)
