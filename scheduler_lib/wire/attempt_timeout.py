"""Extension (2026-12-01): an HTTP action's `timeout`, the deadline of each of its attempts.

Cloud Scheduler's `attemptDeadline`: the whole attempt (the token request, connecting,
sending, the answer's headers and body) ends by it (`actions/checked_socket.Deadline`). Without it
an attempt has the 60 seconds every action had (`DEFAULT_TIMEOUT`). Bounds, and why:
- at least 15 seconds, as Cloud Scheduler's (and the shortest retryInterval);
- at most `MAX_TIMEOUT`, 9 minutes: one attempt runs in one Functions invocation, which the
  host ends after host.json's `functionTimeout` (10 minutes: `FUNCTION_TIMEOUT`, which a
  test checks against host.json), and the invocation needs `INVOCATION_MARGIN` of its own
  (waiting for the exact second, resolving the host, reading and writing the job and its
  history). An invocation the host kills mid-attempt is redelivered and the target called
  again, so the bound is the host's, not Cloud Scheduler's 30 minutes; raising
  functionTimeout (Flex Consumption allows it) is what would let it grow, up to those 30.
- only on Http and Https actions: queue and Service Bus sends keep their SDKs' timeouts, so
  a `timeout` there would be silently ignored; it is a 400 instead.
Each action has its own: an errorAction without one has the default, not the main action's.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import isodate

from scheduler_lib.domain.actions import ATTEMPT_TIMEOUT, DEFAULT_TIMEOUT
from scheduler_lib.errors import ValidationError
from scheduler_lib.wire import readers
from scheduler_lib.wire.durations import read_iso_duration
from scheduler_lib.wire.shapes import JSONObject, as_object
from scheduler_lib.wire.versions import ExtensionProperty, Location

PROPERTY = ATTEMPT_TIMEOUT
MIN_TIMEOUT = timedelta(seconds=15)
#: host.json's `functionTimeout`; one invocation runs one attempt.
FUNCTION_TIMEOUT = timedelta(minutes=10)
#: What an invocation does besides its attempt (see the module docstring).
INVOCATION_MARGIN = timedelta(minutes=1)
#: Cloud Scheduler's upper bound, which the Functions host's bound keeps us below.
CLOUD_SCHEDULER_MAX = timedelta(minutes=30)
MAX_TIMEOUT = min(CLOUD_SCHEDULER_MAX, FUNCTION_TIMEOUT - INVOCATION_MARGIN)
HTTP_TYPES = ("Http", "Https")

SCHEMA: JSONObject = {
    "type": "string",
    "format": "duration",
    "description": "Http and Https actions: how long each attempt may take in all (the "
    "token request, connecting, sending, the answer's headers and body), like Cloud "
    f"Scheduler's attemptDeadline. ISO 8601, {isodate.duration_isoformat(MIN_TIMEOUT)} to "
    f"{isodate.duration_isoformat(MAX_TIMEOUT)} (the Functions host's functionTimeout bounds "
    f"an attempt); default {isodate.duration_isoformat(DEFAULT_TIMEOUT)}.",
}


def validate(value: Any, path: str) -> str:
    """A canonical ISO duration from `MIN_TIMEOUT` to `MAX_TIMEOUT`."""
    text = readers.duration(value, path, low=MIN_TIMEOUT)
    if read_iso_duration(text, path) > MAX_TIMEOUT:
        raise ValidationError(
            path,
            f"must be at most {isodate.duration_isoformat(MAX_TIMEOUT)}: each attempt runs in "
            "one Functions invocation, which ends after host.json's functionTimeout "
            f"({isodate.duration_isoformat(FUNCTION_TIMEOUT)})",
        )
    return text


def check(definition: JSONObject, value: Any, path: str) -> None:
    """Only an HTTP action has a timeout of its own (see the module docstring)."""
    action = as_object(definition.get("action"))
    if ".errorAction." in path:
        action = as_object(action.get("errorAction"))
    if action.get("type") not in HTTP_TYPES:
        raise ValidationError(
            path, f"applies to Http and Https actions only, not to {action.get('type')}"
        )


def seconds(action: Mapping[str, Any], default: float | None = None) -> float:
    """The attempt deadline of a stored action, in seconds: its `timeout`, else `default`
    (else `DEFAULT_TIMEOUT`)."""
    own = action.get(PROPERTY)
    if own is None:
        return DEFAULT_TIMEOUT.total_seconds() if default is None else default
    parsed = read_iso_duration(str(own), f"action.{PROPERTY}")
    if not isinstance(parsed, timedelta):
        raise ValidationError(f"action.{PROPERTY}", "must use days, hours, minutes or seconds")
    return parsed.total_seconds()


#: Its entry in the catalog (`extension_catalog`).
ENTRY = ExtensionProperty(Location.ACTION, PROPERTY, validate, SCHEMA, cross_check=check)
