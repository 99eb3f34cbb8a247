"""Extension 1 (2026-12-01): which failures retry (`retryOn`) and how long an Exponential
policy waits (full jitter, `Retry-After`). `retry.RetryPolicy` applies them.

Full jitter (as AWS's architecture blog names it): the delay before retry n+1 (n = 0 for the
first retry) is uniform in [0, min(maxRetryInterval, retryInterval * 2^n)], drawn from the
executor's random source (injected, so tests are deterministic). Spreading retries over the
whole window keeps many jobs failing together from coming back together.

A target that answers with `Retry-After` (delta-seconds or an HTTP-date) knows better than
any formula: that wait is used instead, clamped to [retryInterval, maxRetryInterval] so a
target can neither hammer itself nor park a job for a year.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

from scheduler_lib.actions import ActionOutcome

#: A uniform draw in [0, 1): `random.random`, or a seeded `Random(...).random` in tests.
Draw = Callable[[], float]

#: The status code in an HTTP attempt's history message (`actions/http.py`), for an attempt
#: concluded from its history entry after a redelivery (its outcome is gone by then).
_STATUS_IN_MESSAGE = re.compile(r"^Http Action - Response from host '[^']*': '(\d{3})'")


@dataclass(frozen=True)
class Failure:
    """What a failed attempt tells the retry policy: the target's status (None: it never
    answered) and its `Retry-After` header."""

    status_code: int | None = None
    retry_after: str | None = None

    @classmethod
    def of(cls, outcome: ActionOutcome | None, history_message: str) -> Failure:
        if outcome is not None:
            return cls(outcome.status_code, outcome.retry_after)
        found = _STATUS_IN_MESSAGE.match(history_message)
        return cls(int(found.group(1)) if found else None)

    def matches(self, retry_on: Collection[str] | None) -> bool:
        """Whether `retryOn` (None: every failure) lists this failure."""
        if retry_on is None:
            return True
        if self.status_code is None:
            return "transport" in retry_on
        if 500 <= self.status_code <= 599 and "5xx" in retry_on:
            return True
        return str(self.status_code) in retry_on


def full_jitter(first: timedelta, cap: timedelta, retry: int, draw: Draw) -> timedelta:
    """The delay before retry `retry` + 1 (see the module docstring)."""
    ceiling = min(cap, first * (2 ** min(retry, 40)))  # 2^40 * 15 s is past any cap
    return timedelta(seconds=round(draw() * ceiling.total_seconds(), 3))


def retry_after(value: str | None, *, now: datetime) -> timedelta | None:
    """The wait a `Retry-After` header asks for (None: absent or unreadable)."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return timedelta(seconds=int(text))
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(when - now, timedelta(0))


def clamp(delay: timedelta, low: timedelta, high: timedelta) -> timedelta:
    return max(low, min(delay, high))
