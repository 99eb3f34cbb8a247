"""Where an action may send, decided from its definition: checked when a job is stored (a 400
naming the field) and again by the executors when it runs (settings may have changed since).

- Storage account and namespace names are valid names (`model.targets`), also at run time.
- An HTTP request's host, when it is a literal address (in any spelling) or a metadata name,
  must pass the egress policy (`egress`); host names are checked on their resolved
  addresses at run time.
- A Storage-queue message without a `sasToken`, or a Service Bus message without
  SharedAccessKey authentication, is sent with the app's own identity. Any API caller can
  write such a job, so identity-based sends reach only the storage accounts and namespaces
  the operator allowed (`Settings.identity_storage_accounts_allowed`,
  `identity_servicebus_namespaces`; by default the app's own storage account and no
  namespace), never whatever account the app's identity happens to hold a role on.
- An HTTP request with `ManagedServiceIdentity` authentication (2026-12-01) asks the app's
  identity for a token: only for an audience the operator listed, and only to a host listed
  with it (`Settings.identity_audiences`, `SCHEDULER_IDENTITY_AUDIENCES`; none by default).
  Checked on every PUT and PATCH (a URI moved to another host is checked again) and before
  each attempt asks for a token (the setting may have changed since the job was stored).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

import requests

from scheduler_lib.actions.egress import EgressDenied, policy_for
from scheduler_lib.config import Settings
from scheduler_lib.errors import ValidationError
from scheduler_lib.identity_audiences import SETTING as AUDIENCES_SETTING
from scheduler_lib.wire import managed_identity, targets

_SB = {"ServiceBusQueue": "serviceBusQueueMessage", "ServiceBusTopic": "serviceBusTopicMessage"}


def check_definition(action: Mapping[str, Any], settings: Settings) -> None:
    """Check a stored action and its errorAction; ValidationError names the field under
    `properties.`."""
    for path, one in _actions(action, "properties.action"):
        check_action(one, settings, path)


def check_action(action: Mapping[str, Any], settings: Settings, path: str = "action") -> None:
    """Check one action (not its errorAction); ValidationError names `path.<field>`."""
    kind = action.get("type")
    if kind in ("Http", "Https"):
        uri = (action.get("request") or {}).get("uri")
        try:
            host = urlsplit(uri).hostname if isinstance(uri, str) else None
        except ValueError:
            host = None
        if host:
            try:
                policy_for(settings).check_host(host)
            except EgressDenied as exc:
                raise ValidationError(f"{path}.request.uri", exc.message) from None
        check_identity(action.get("request") or {}, settings, path)
    elif kind == "StorageQueue":
        message = action.get("queueMessage") or {}
        # Again at run time: a job stored before names were validated must not turn an
        # "account" such as `127.0.0.1/` into a host.
        account_path = f"{path}.queueMessage.storageAccount"
        targets.storage_account(message.get("storageAccount"), account_path)
        if not message.get("sasToken"):
            account = str(message.get("storageAccount") or "").lower()
            allowed = settings.identity_storage_accounts_allowed
            if account not in allowed:
                raise ValidationError(
                    f"{path}.queueMessage.sasToken",
                    f"is required for storage account '{account}': without a SAS token the "
                    "message is sent with the app's identity, which may reach only "
                    f"{_named(allowed)} (SCHEDULER_IDENTITY_STORAGE_ACCOUNTS)",
                )
    elif kind in _SB:
        body = action.get(_SB[kind]) or {}
        targets.servicebus_namespace(body.get("namespace"), f"{path}.{_SB[kind]}.namespace")
        auth = body.get("authentication") or {}
        if uses_identity(body):
            namespace = str(body.get("namespace") or "").lower()
            allowed = frozenset(n.lower() for n in settings.identity_servicebus_namespaces)
            if namespace not in allowed:
                raise ValidationError(
                    f"{path}.{_SB[kind]}.authentication",
                    f"is required for namespace '{namespace}' (SharedAccessKey with sasKeyName "
                    "and sasKey): without it the message is sent with the app's identity, "
                    f"which may reach only {_named(allowed)} "
                    "(SCHEDULER_IDENTITY_SERVICEBUS_NAMESPACES)",
                )
        elif not auth.get("sasKey"):
            raise ValidationError(
                f"{path}.{_SB[kind]}.authentication.sasKey",
                "is required for SharedAccessKey authentication (a definition read with GET "
                "carries no secrets: send the key again)",
            )


def check_identity(request: Mapping[str, Any], settings: Settings, path: str = "action") -> None:
    """For `ManagedServiceIdentity` authentication: the audience is one the operator allowed
    and the host `requests` will connect to is one of its hosts; ValidationError names
    `path.request.authentication.audience` or `path.request.uri` (and the setting)."""
    auth = request.get("authentication") or {}
    if auth.get("type") != managed_identity.TYPE:
        return
    policy, audience = settings.identity_audiences, str(auth.get("audience") or "")
    hosts = policy.hosts_for(audience)
    if hosts is None:
        allowed = (
            f"allows only {_named(frozenset(policy.audiences))} in {AUDIENCES_SETTING}"
            if policy.audiences
            else f"allows none ({AUDIENCES_SETTING} is empty)"
        )
        raise ValidationError(
            f"{path}.request.authentication.audience",
            f"'{audience}' is not an audience the app's managed identity may get tokens for "
            f"(ManagedServiceIdentity): the operator {allowed}",
        )
    destination = _connects_to(request.get("uri"))
    if destination is None or not policy.allows(audience, *destination):
        where = (
            f"host '{destination[0]}' (port {destination[1]})"
            if destination
            else f"{request.get('uri')!r} (not a URL)"
        )
        raise ValidationError(
            f"{path}.request.uri",
            f"{where} may not receive tokens for audience '{audience}': {AUDIENCES_SETTING} "
            f"sends them only to {', '.join(str(h) for h in hosts)}",
        )


def _connects_to(uri: Any) -> tuple[str, int] | None:
    """(host, port) that `requests` connects to for `uri`: its own parse, with the host
    IDNA-encoded as it sends it (no second parser to disagree with). None: not a URL."""
    prepared = requests.PreparedRequest()
    try:
        prepared.prepare_url(uri, None)
        parts = urlsplit(str(prepared.url))
        port = parts.port or {"http": 80, "https": 443}[parts.scheme.lower()]
    except (requests.RequestException, ValueError, KeyError, TypeError):
        return None
    return (parts.hostname, port) if parts.hostname else None


def uses_identity(service_bus_message: Mapping[str, Any]) -> bool:
    """Whether a Service Bus message is sent with the app's identity: no authentication, or
    type NotSpecified."""
    auth = service_bus_message.get("authentication") or {}
    return not auth or auth.get("type") == "NotSpecified"


def _named(allowed: frozenset[str]) -> str:
    return ", ".join(f"'{n}'" for n in sorted(allowed)) if allowed else "nothing (none allowed)"


def _actions(action: Mapping[str, Any] | None, path: str) -> Iterator[tuple[str, Any]]:
    if action:
        yield path, action
        yield from _actions(action.get("errorAction"), f"{path}.errorAction")
