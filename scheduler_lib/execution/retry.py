"""The retry policy of a job's action (how a retry, or the errorAction, is delivered is
`finish.deliver`'s).

Azure Scheduler's policy is `None` (one attempt) or `Fixed`: `retryCount` more attempts (default
4, at most 20) spaced `retryInterval` apart (default PT30S, 15 seconds to 18 months). A missing
policy means the default Fixed one. api-version 2026-12-01 adds `Exponential` (full-jitter
delays capped by `maxRetryInterval`, a target's `Retry-After` honoured within bounds) and, for
either type, `maxRetryDuration` and `retryOn` (`backoff`; docs/extensions.md). The
errorAction runs under the main action's policy (the issue's rule), unless it carries a
`retryPolicy` of its own: the 2016-03-01 API allows one on `JobErrorAction`, and a field the
user sent is never silently ignored.

A retry is never a worker sleeping through the interval: it is the next `ExecutionMessage` sent
again with the interval as its visibility delay, measured from the end of the failed attempt.
Storage queues accept at most 7 days of delay (`execution_queue.MAX_DELAY`); a longer wait is
parked in the due index (`finish.deliver`), whose row the dispatcher sends when its minute comes.

The stored definition is validated by the API; this module checks again because a definition
that is not (written by an older version, edited by hand) must fail loudly *before* the attempt
runs, naming the field, instead of retrying forever or not at all.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import isodate

from scheduler_lib.domain.messages import ERROR_ACTION
from scheduler_lib.errors import ValidationError
from scheduler_lib.execution import backoff
from scheduler_lib.execution.backoff import Draw, Failure
from scheduler_lib.wire import backoff as backoff_rules
from scheduler_lib.wire.durations import read_iso_duration

DEFAULT_INTERVAL = "PT30S"
DEFAULT_COUNT = 4
MAX_COUNT = 20
MIN_INTERVAL = timedelta(seconds=15)
MAX_INTERVAL = timedelta(days=548)  # 18 months, as the model validates it
PATH = "action.retryPolicy"
DEFAULT_MAX_INTERVAL = backoff_rules.DEFAULT_MAX_INTERVAL


@dataclass(frozen=True)
class RetryPolicy:
    """How many retries an action gets and how far apart; `interval` may be calendar-based
    (`P1M` is an `isodate.Duration`), so it is only ever added to an instant."""

    retry_type: str  # "None" | "Fixed" | "Exponential"
    interval: timedelta | isodate.Duration = timedelta(seconds=30)
    count: int = DEFAULT_COUNT
    #: Extension 1 (2026-12-01, see `backoff`): the cap of an Exponential delay, the age of
    #: the occurrence after which nothing retries, and which failures retry (None: all).
    max_interval: timedelta = DEFAULT_MAX_INTERVAL
    max_duration: timedelta | None = None
    retry_on: frozenset[str] | None = None

    @classmethod
    def from_action(cls, action: Mapping[str, Any], *, path: str = PATH) -> RetryPolicy:
        """The policy of a stored action (defaults filled in); ValidationError naming the
        field under `path` if unusable."""
        raw = action.get("retryPolicy")
        if raw is None:
            raw = {}
        if not isinstance(raw, Mapping):
            raise ValidationError(path, "must be an object")
        kind = str(raw.get("retryType") or "Fixed")
        if kind.lower() == "none":
            return cls("None", timedelta(0), 0)
        if kind.lower() not in ("fixed", "exponential"):
            raise ValidationError(f"{path}.retryType", f"unknown retry type {kind!r}")
        interval = _interval(raw.get("retryInterval"), f"{path}.retryInterval")
        count = _count(raw.get("retryCount"), f"{path}.retryCount")
        first = _span(interval)
        retry_on = raw.get("retryOn")
        return cls(
            kind.capitalize(),
            interval,
            count,
            max_interval=max(first, _limit(raw, "maxRetryInterval", path) or DEFAULT_MAX_INTERVAL),
            max_duration=_limit(raw, "maxRetryDuration", path),
            retry_on=None
            if retry_on is None
            else frozenset(backoff_rules.retry_on(retry_on, f"{path}.retryOn")),
        )

    @classmethod
    def for_attempt(cls, action: Mapping[str, Any], action_name: str) -> RetryPolicy:
        """The policy for an attempt of `action` (the job's main action) or of its errorAction
        (`action_name` "ErrorAction"): the errorAction's own policy if it has one."""
        error_action = action.get("errorAction")
        if (
            action_name == ERROR_ACTION
            and isinstance(error_action, Mapping)
            and error_action.get("retryPolicy") is not None
        ):
            return cls.from_action(error_action, path="action.errorAction.retryPolicy")
        return cls.from_action(action)

    def allows_retry(self, attempt: int) -> bool:
        """Whether an attempt numbered `attempt` (0 = first try) that failed has a retry left."""
        return self.retry_type != "None" and attempt < self.count

    def retry_at(
        self,
        failed_at: datetime,
        *,
        attempt: int = 0,
        failure: Failure | None = None,
        draw: Draw = random.random,
    ) -> datetime:
        """When the retry of attempt `attempt`, which ended at `failed_at`, becomes due: a
        fixed interval, or an Exponential one (`backoff`: full jitter, or the target's
        `Retry-After` within [retryInterval, maxRetryInterval])."""
        if self.retry_type != "Exponential":
            return failed_at + self.interval
        first = _span(self.interval)
        asked = backoff.retry_after(failure.retry_after if failure else None, now=failed_at)
        if asked is not None:
            return failed_at + backoff.clamp(asked, first, self.max_interval)
        return failed_at + backoff.full_jitter(first, self.max_interval, attempt, draw)

    def next_retry(
        self,
        attempt: int,
        failure: Failure,
        *,
        failed_at: datetime,
        occurrence: datetime,
        draw: Draw = random.random,
    ) -> datetime | None:
        """When the failed attempt `attempt` is retried, or None: no retry left, a failure
        `retryOn` does not list, or a retry later than `maxRetryDuration` after `occurrence`."""
        if not self.allows_retry(attempt) or not failure.matches(self.retry_on):
            return None
        due = self.retry_at(failed_at, attempt=attempt, failure=failure, draw=draw)
        if self.max_duration is not None and due > occurrence + self.max_duration:
            return None
        return due


def _interval(value: Any, field: str) -> timedelta | isodate.Duration:
    text = DEFAULT_INTERVAL if value in (None, "") else value
    if not isinstance(text, str):
        raise ValidationError(field, "must be an ISO 8601 duration such as PT30S")
    interval = read_iso_duration(text, field)
    try:
        span = _span(interval)
    except OverflowError:
        raise ValidationError(field, "must be between 15 seconds and 18 months") from None
    if not MIN_INTERVAL <= span <= MAX_INTERVAL:
        raise ValidationError(field, "must be between 15 seconds and 18 months")
    return interval


def _limit(raw: Mapping[str, Any], name: str, path: str) -> timedelta | None:
    """An extension duration of the stored policy (`maxRetryInterval`, `maxRetryDuration`)."""
    value = raw.get(name)
    if value is None:
        return None
    return read_iso_duration(backoff_rules.duration(value, f"{path}.{name}"), f"{path}.{name}")


def _span(interval: timedelta | isodate.Duration) -> timedelta:
    """The length of `interval` from a fixed reference (months differ in length)."""
    if isinstance(interval, timedelta):
        return interval
    reference = datetime(2001, 1, 1)
    return (reference + interval) - reference


def _count(value: Any, field: str) -> int:
    if value is None:
        return DEFAULT_COUNT
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        raise ValidationError(field, f"must be an integer from 0 to {MAX_COUNT}")
    return value
