"""Error types of the scheduler: what went wrong, in the domain's terms.

Every layer raises these (never bare exceptions for user mistakes). They carry no HTTP
status: `api/errors.py` maps each to its status and to the ARM error body that Azure Resource
Manager clients, the `azure-mgmt-scheduler` SDK included, know how to read.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class SchedulerError(Exception):
    """Base of all scheduler errors: a message for the user and, when one field is at
    fault, its JSON path (`target`)."""

    def __init__(self, message: str, *, target: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.target = target


class ValidationError(SchedulerError, ValueError):
    """Bad input. `field` is the JSON path of the offending value, e.g.
    `recurrence.schedule.weekDays`; the message always starts with it so that a user
    reading only the message knows what to fix."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message, target=field or None)
        self.field = field


class AuthenticationError(SchedulerError):
    """The caller did not prove who it is (no or a wrong API key)."""


class NotFoundError(SchedulerError):
    """The job, collection or entity does not exist."""


class ConflictError(SchedulerError):
    """The request is valid but the resource's current state forbids it."""


class QuotaExceededError(ConflictError):
    """A job collection quota (`maxJobCount`, `maxRecurrence`, SKU limits) forbids it."""


class PreconditionFailedError(SchedulerError):
    """An `If-Match` ETag no longer matches: someone else changed the resource."""


def did_you_mean(word: str, options: Iterable[str]) -> str:
    """` (did you mean 'minutes'?)` when `word` is close to one of `options` (a singular
    `minute`, an old-API `monthly`), else empty: what a pasted example most often gets wrong."""
    spelled = {option.lower(): option for option in options}
    close = difflib.get_close_matches(word.lower(), spelled, n=1, cutoff=0.75)
    return f" (did you mean {spelled[close[0]]!r}?)" if close else ""


class ServiceUnavailableError(SchedulerError):
    """Something the API depends on (storage, its configuration) is not available right
    now; the client should try again after `retry_after` seconds (`Retry-After`)."""

    def __init__(self, message: str, *, retry_after: int = 5) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class TooManyRequestsError(SchedulerError):
    """The caller sent too many failed requests (wrong keys) and is refused until
    `retry_after` seconds have passed (`Retry-After`)."""

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after
