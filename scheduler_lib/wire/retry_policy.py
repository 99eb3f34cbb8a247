"""An action's `retryPolicy` on the wire: validated into its canonical stored form, its
defaults (`domain/actions.py` declares them) written in, so the stored JSON says what runs.

Azure Scheduler's policy is `None` or `Fixed` (`retryInterval` 15 seconds to 18 months,
`retryCount` 1 to 20); the 2026-12-01 extensions (`backoff`) add a retry type and properties,
which `extensions` knows by the request's version.
"""

from __future__ import annotations

from typing import Any

import isodate

from scheduler_lib.domain.actions import (
    DEFAULT_RETRY_COUNT,
    DEFAULT_RETRY_INTERVAL,
    DEFAULT_RETRY_TYPE,
    MAX_RETRY_COUNT,
)
from scheduler_lib.errors import ValidationError
from scheduler_lib.wire import backoff, extensions, readers
from scheduler_lib.wire.shapes import JSONObject
from scheduler_lib.wire.versions import Location

RETRY_TYPES = ("None", "Fixed")
#: The stored form of the default policy.
DEFAULT_RETRY = {
    "retryType": DEFAULT_RETRY_TYPE.value,
    "retryInterval": isodate.duration_isoformat(DEFAULT_RETRY_INTERVAL),
    "retryCount": DEFAULT_RETRY_COUNT,
}


def retry_policy_source(
    source: JSONObject, payload: str, path: str, scope: extensions.Scope
) -> JSONObject | None:
    """The action's retry policy, validated (None: not given). The documentation's full HTTP
    job example puts it inside `request`; it is read there too and stored at the action
    level, where the API defines it. Given in both places, the two must agree."""
    outer = source.get("retryPolicy")
    request = source.get(payload) if payload == "request" else None
    inner = request.get("retryPolicy") if isinstance(request, dict) else None
    outer_path = readers.join(path, "retryPolicy")
    inner_path = readers.join(readers.join(path, payload), "retryPolicy")
    policy = _retry_policy(outer, outer_path, scope) if outer is not None else None
    if inner is None:
        return policy
    nested = _retry_policy(inner, inner_path, scope)
    if policy is not None and policy != nested:
        raise ValidationError(inner_path, f"differs from {outer_path}; give it once")
    return nested


def _retry_policy(value: Any, path: str, scope: extensions.Scope) -> JSONObject:
    if value is None:
        return dict(DEFAULT_RETRY)
    known = ("retryType", "retryInterval", "retryCount")
    source = readers.keys(value, path, known + scope.names(Location.RETRY_POLICY))
    types = extensions.choices(Location.RETRY_POLICY, "retryType", RETRY_TYPES, scope.version)
    kind = readers.enum(
        source.get("retryType", DEFAULT_RETRY_TYPE.value), readers.join(path, "retryType"), types
    )
    extra = scope.read(Location.RETRY_POLICY, source, path)
    if kind == "None":
        for name in ("retryInterval", "retryCount"):
            if source.get(name) not in (None, 0):
                raise ValidationError(readers.join(path, name), "does not apply to retryType None")
        return {"retryType": "None", **extra}
    where = readers.join(path, "retryInterval")
    given = source.get("retryInterval", DEFAULT_RETRY["retryInterval"])
    interval = backoff.duration(given, where)  # 15 s .. 18 months
    count = readers.integer(
        source.get("retryCount", DEFAULT_RETRY_COUNT),
        readers.join(path, "retryCount"),
        low=1,
        high=MAX_RETRY_COUNT,
    )
    # An extension retryType (`extensions.choices`) reads interval and count as Fixed does;
    # what it adds is validated by its extension properties.
    return {"retryType": kind, "retryInterval": interval, "retryCount": count, **extra}
