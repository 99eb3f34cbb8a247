"""A job's action (and its errorAction) as a type: one per kind, each with its retry policy.

Read from the action's canonical stored JSON, which each keeps (`document`: what the
senders in `actions/` build their request or message from, and what the wire layer renders).
The retry policy is resolved with its defaults (`DEFAULT_RETRY_*`, declared here once: the
validator writes them into a new job, and a job stored without a policy gets them here).

A stored policy is checked as it is read, because one that was not validated (written by an
older version, edited by hand) must fail loudly, naming its field, *before* an attempt runs,
instead of retrying forever or not at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Self

import isodate

from scheduler_lib.errors import ValidationError
from scheduler_lib.timeutil import read_iso_duration


class ActionType(StrEnum):
    HTTP = "Http"
    HTTPS = "Https"
    STORAGE_QUEUE = "StorageQueue"
    SERVICE_BUS_QUEUE = "ServiceBusQueue"
    SERVICE_BUS_TOPIC = "ServiceBusTopic"


class RetryType(StrEnum):
    NONE = "None"  # one attempt
    FIXED = "Fixed"  # `count` more, `interval` apart (the default)
    EXPONENTIAL = "Exponential"  # extension 1 (2026-12-01): growing, jittered delays


DEFAULT_RETRY_TYPE = RetryType.FIXED
DEFAULT_RETRY_INTERVAL = timedelta(seconds=30)
DEFAULT_RETRY_COUNT = 4
MAX_RETRY_COUNT = 20
MIN_RETRY_INTERVAL = timedelta(seconds=15)
MAX_RETRY_INTERVAL = timedelta(days=548)  # 18 months
#: Used when an Exponential policy gives no `MAX_INTERVAL` (or its first delay is longer).
DEFAULT_MAX_RETRY_INTERVAL = timedelta(hours=1)
#: An HTTP attempt's deadline without a `timeout` (the 60 seconds every action had).
DEFAULT_TIMEOUT = timedelta(seconds=60)
RETRY_PATH = "action.retryPolicy"
#: The wire names of the actions' 2026-12-01 fields (docs/extensions.md), each declared once,
#: here, named after the field that reads it: their catalog entries (`wire/backoff.py`,
#: `wire/attempt_timeout.py`, `wire/placeholders.py`) take them from here.
MAX_INTERVAL = "maxRetryInterval"
MAX_DURATION = "maxRetryDuration"
RETRY_ON = "retryOn"
ATTEMPT_TIMEOUT = "timeout"
ENVELOPE = "envelope"


@dataclass(frozen=True)
class RetryPolicy:
    """How many retries an action gets and how far apart; `interval` may be calendar-based
    (`P1M` is an `isodate.Duration`), so it is only ever added to an instant."""

    retry_type: RetryType
    interval: timedelta | isodate.Duration = DEFAULT_RETRY_INTERVAL
    count: int = DEFAULT_RETRY_COUNT
    #: Extension 1 (2026-12-01): the cap of an Exponential delay, the age of the occurrence
    #: after which nothing retries, and which failures retry (None: all).
    max_interval: timedelta = DEFAULT_MAX_RETRY_INTERVAL
    max_duration: timedelta | None = None
    retry_on: frozenset[str] | None = None

    @classmethod
    def from_action(cls, action: Mapping[str, Any], *, path: str = RETRY_PATH) -> Self:
        """The policy of a stored action (defaults filled in); ValidationError naming the
        field under `path` if unusable."""
        raw = action.get("retryPolicy")
        if raw is None:
            raw = {}
        if not isinstance(raw, Mapping):
            raise ValidationError(path, "must be an object")
        kind = str(raw.get("retryType") or DEFAULT_RETRY_TYPE)
        if kind.lower() == "none":
            return cls(RetryType.NONE, timedelta(0), 0)
        if kind.lower() not in ("fixed", "exponential"):
            raise ValidationError(f"{path}.retryType", f"unknown retry type {kind!r}")
        interval = _interval(raw.get("retryInterval"), f"{path}.retryInterval")
        retry_on = raw.get(RETRY_ON)
        if retry_on is not None and not isinstance(retry_on, list):
            raise ValidationError(f"{path}.{RETRY_ON}", "must be a list")
        return cls(
            RetryType(kind.capitalize()),
            interval,
            _count(raw.get("retryCount"), f"{path}.retryCount"),
            max_interval=max(
                span(interval), _limit(raw, MAX_INTERVAL, path) or DEFAULT_MAX_RETRY_INTERVAL
            ),
            max_duration=_limit(raw, MAX_DURATION, path),
            retry_on=None if retry_on is None else frozenset(str(w).lower() for w in retry_on),
        )

    def allows_retry(self, attempt: int) -> bool:
        """Whether an attempt numbered `attempt` (0 = first try) that failed has a retry left."""
        return self.retry_type is not RetryType.NONE and attempt < self.count


@dataclass(frozen=True)
class Action:
    """What every kind of action has: its type, its stored JSON, its retry policy."""

    type: ActionType
    document: Mapping[str, Any] = field(repr=False)
    retry_policy: RetryPolicy
    #: Whether the stored action has a policy of its own: an errorAction without one runs
    #: under the main action's (its `retry_policy` is then the default, unused).
    own_retry_policy: bool

    @property
    def timeout(self) -> timedelta | None:
        return None


@dataclass(frozen=True)
class HttpAction(Action):
    """Http or Https: a request, with its authentication's kind (None: none)."""

    uri: str
    method: str
    authentication: str | None
    #: Extension (2026-12-01): each attempt's deadline (None: `DEFAULT_TIMEOUT`).
    attempt_timeout: timedelta | None

    @property
    def timeout(self) -> timedelta | None:
        return self.attempt_timeout


@dataclass(frozen=True)
class StorageQueueAction(Action):
    storage_account: str
    queue_name: str
    #: Extension (2026-12-01): the message is the occurrence's JSON envelope.
    envelope: bool


@dataclass(frozen=True)
class ServiceBusAction(Action):
    """ServiceBusQueue (`entity` is the queue) or ServiceBusTopic (the topic path)."""

    namespace: str
    entity: str


def action_of(document: Mapping[str, Any], path: str) -> Action:
    """The typed action of a stored action's JSON (ValidationError naming `path` if unusable)."""
    policy = RetryPolicy.from_action(document, path=f"{path}.retryPolicy")
    own = document.get("retryPolicy") is not None
    try:
        kind = ActionType(str(document.get("type")))
    except ValueError:
        unknown = f"unknown action type {document.get('type')!r}"
        raise ValidationError(f"{path}.type", unknown) from None
    if kind in (ActionType.HTTP, ActionType.HTTPS):
        request = document.get("request") or {}
        timeout = document.get(ATTEMPT_TIMEOUT)
        return HttpAction(
            kind,
            document,
            policy,
            own,
            uri=str(request.get("uri", "")),
            method=str(request.get("method", "")),
            authentication=(request.get("authentication") or {}).get("type"),
            attempt_timeout=(
                None if timeout is None else _timedelta(timeout, f"{path}.{ATTEMPT_TIMEOUT}")
            ),
        )
    if kind is ActionType.STORAGE_QUEUE:
        message = document.get("queueMessage") or {}
        return StorageQueueAction(
            kind,
            document,
            policy,
            own,
            storage_account=str(message.get("storageAccount", "")),
            queue_name=str(message.get("queueName", "")),
            envelope=message.get(ENVELOPE) is True,
        )
    topic = kind is ActionType.SERVICE_BUS_TOPIC
    message = document.get("serviceBusTopicMessage" if topic else "serviceBusQueueMessage") or {}
    return ServiceBusAction(
        kind,
        document,
        policy,
        own,
        namespace=str(message.get("namespace", "")),
        entity=str(message.get("topicPath" if topic else "queueName", "")),
    )


def span(interval: timedelta | isodate.Duration) -> timedelta:
    """The length of `interval` from a fixed reference (months differ in length)."""
    if isinstance(interval, timedelta):
        return interval
    reference = datetime(2001, 1, 1)
    return (reference + interval) - reference


def _interval(value: Any, field: str) -> timedelta | isodate.Duration:
    if value in (None, ""):
        return DEFAULT_RETRY_INTERVAL
    if not isinstance(value, str):
        raise ValidationError(field, "must be an ISO 8601 duration such as PT30S")
    interval = read_iso_duration(value, field)
    try:
        length = span(interval)
    except OverflowError:
        raise ValidationError(field, "must be between 15 seconds and 18 months") from None
    if not MIN_RETRY_INTERVAL <= length <= MAX_RETRY_INTERVAL:
        raise ValidationError(field, "must be between 15 seconds and 18 months")
    return interval


def _limit(raw: Mapping[str, Any], name: str, path: str) -> timedelta | None:
    """An extension duration of the stored policy (`MAX_INTERVAL`, `MAX_DURATION`)."""
    value = raw.get(name)
    return None if value is None else _timedelta(value, f"{path}.{name}")


def _timedelta(value: Any, field: str) -> timedelta:
    parsed = read_iso_duration(str(value), field)
    if not isinstance(parsed, timedelta):
        raise ValidationError(field, "must use days, hours, minutes or seconds")
    return parsed


def _count(value: Any, field: str) -> int:
    if value is None:
        return DEFAULT_RETRY_COUNT
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_RETRY_COUNT:
        raise ValidationError(field, f"must be an integer from 0 to {MAX_RETRY_COUNT}")
    return value
