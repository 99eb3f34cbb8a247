"""Extension 1 (2026-12-01): retry with backoff, validated here (applied by the executor,
`execution/retry.py` and `execution/backoff.py`).

`retryType: Exponential` reads `retryInterval` (the first delay) and `retryCount` as Fixed
does; `maxRetryInterval` caps the delay (default `DEFAULT_MAX_INTERVAL`, Cloud Scheduler's
default maximum backoff). `maxRetryDuration` (Fixed or Exponential) gives up once the
occurrence is that old, as EventBridge Scheduler's maximum event age; `retryOn` (Fixed or
Exponential) lists which failures retry. The rules that involve the policy's other keys are
cross-checks: a key that would be ignored by the policy's type is a 400, never dropped.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import isodate

from scheduler_lib.domain import actions as fields
from scheduler_lib.domain.actions import DEFAULT_MAX_RETRY_INTERVAL as DEFAULT_MAX_INTERVAL
from scheduler_lib.domain.actions import DEFAULT_RETRY_INTERVAL
from scheduler_lib.errors import ValidationError
from scheduler_lib.wire import readers
from scheduler_lib.wire.durations import read_iso_duration
from scheduler_lib.wire.shapes import JSONObject
from scheduler_lib.wire.versions import ExtensionProperty, Location

EXPONENTIAL = "Exponential"
MIN_DURATION = timedelta(seconds=15)
MAX_DURATION = timedelta(days=548)  # 18 months, as retryInterval
#: `retryOn` words besides a status code: any 5xx answer, and no answer at all (connection
#: refused or reset, timeout, TLS, DNS, egress refused).
CLASSES = ("5xx", "transport")
STATUS_RANGE = (300, 599)  # a 2xx is a success; 1xx never ends a request
MAX_RETRY_ON = 20


def duration(value: Any, path: str) -> str:
    """`retryInterval` (2016-03-01's bounds) and, as it, `maxRetryInterval` /
    `maxRetryDuration`: 15 seconds to 18 months, days at most."""
    text = readers.duration(value, path, low=MIN_DURATION)
    if read_iso_duration(text, path) > MAX_DURATION:
        raise ValidationError(path, "must be at most 18 months")
    return text


def retry_on(value: Any, path: str) -> list[str]:
    """`retryOn`: a non-empty list of "5xx", "transport" or status codes 300-599 (a string
    or a number; stored as a string), without repeats."""
    if not isinstance(value, list) or not value:
        raise ValidationError(path, 'must be a non-empty list such as ["5xx", "429", "transport"]')
    if len(value) > MAX_RETRY_ON:
        raise ValidationError(path, f"must have at most {MAX_RETRY_ON} entries")
    result: list[str] = []
    for index, item in enumerate(value):
        word = _retry_word(item, readers.join(path, index))
        if word not in result:
            result.append(word)
    return result


def _retry_word(item: Any, path: str) -> str:
    if isinstance(item, str) and item.lower() in CLASSES:
        return item.lower()
    text = str(item) if isinstance(item, int) and not isinstance(item, bool) else item
    low, high = STATUS_RANGE
    if isinstance(text, str) and text.isdigit() and low <= int(text) <= high:
        return str(int(text))
    raise ValidationError(
        path, f'must be "5xx", "transport" or an HTTP status code from {low} to {high}'
    )


def policy_at(definition: JSONObject, path: str) -> JSONObject:
    """The retryPolicy object holding the property at `path` (`properties.action...`)."""
    node: Any = definition
    for key in path.split(".")[1:-1]:
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else {}


def check_max_interval(definition: JSONObject, value: Any, path: str) -> None:
    """Only an Exponential policy has a growing delay to cap, and the cap is at least the
    first delay."""
    policy = policy_at(definition, path)
    if policy.get("retryType") != EXPONENTIAL:
        raise ValidationError(path, "applies to retryType Exponential only")
    first = _first_interval(policy, path)
    if read_iso_duration(value, path) < first:
        raise ValidationError(path, "must be at least retryInterval")


def check_max_duration(definition: JSONObject, value: Any, path: str) -> None:
    """A policy that retries, whose first retry can come before the limit."""
    policy = _retrying(definition, path)
    first = _first_interval(policy, path)
    if policy.get("retryType") != EXPONENTIAL and read_iso_duration(value, path) < first:
        raise ValidationError(path, "must be at least retryInterval (no retry would come)")


def _first_interval(policy: JSONObject, path: str) -> Any:
    value = policy.get("retryInterval")  # canonical: an ISO 8601 text, or absent
    return read_iso_duration(value, path) if isinstance(value, str) else DEFAULT_RETRY_INTERVAL


def check_retry_on(definition: JSONObject, value: Any, path: str) -> None:
    _retrying(definition, path)


def _retrying(definition: JSONObject, path: str) -> JSONObject:
    policy = policy_at(definition, path)
    if policy.get("retryType") == "None":
        raise ValidationError(path, "does not apply to retryType None")
    return policy


DURATION_SCHEMA: JSONObject = {"type": "string", "format": "duration"}
MAX_INTERVAL_SCHEMA: JSONObject = {
    **DURATION_SCHEMA,
    "description": "retryType Exponential: the longest delay between attempts (default "
    f"{isodate.duration_isoformat(DEFAULT_MAX_INTERVAL)}). "
    "Delays are full jitter: random in [0, min(maxRetryInterval, retryInterval * 2^n)] "
    "before retry n+1; a Retry-After answer is honoured within [retryInterval, "
    "maxRetryInterval].",
}
MAX_DURATION_SCHEMA: JSONObject = {
    **DURATION_SCHEMA,
    "description": "Give up retrying once the occurrence is this old (no retry would start "
    "later than its scheduled time plus this duration).",
}
RETRY_ON_SCHEMA: JSONObject = {
    "type": "array",
    "items": {"type": "string"},
    "maxItems": MAX_RETRY_ON,
    "description": 'Which failures retry: "5xx", "transport" (no answer) and status codes '
    '300-599, e.g. ["5xx", "408", "429", "transport"]; any other failure does not. '
    "Absent: every failure retries, as in 2016-03-01.",
}

#: Their entries in the catalog (`extension_catalog`).
ENTRIES = (
    ExtensionProperty(
        Location.RETRY_POLICY,
        fields.MAX_INTERVAL,
        duration,
        MAX_INTERVAL_SCHEMA,
        cross_check=check_max_interval,
    ),
    ExtensionProperty(
        Location.RETRY_POLICY,
        fields.MAX_DURATION,
        duration,
        MAX_DURATION_SCHEMA,
        cross_check=check_max_duration,
    ),
    ExtensionProperty(
        Location.RETRY_POLICY,
        fields.RETRY_ON,
        retry_on,
        RETRY_ON_SCHEMA,
        cross_check=check_retry_on,
    ),
)
