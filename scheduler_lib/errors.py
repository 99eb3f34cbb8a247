"""Error types of the scheduler, each carrying its ARM error code and HTTP status.

Every layer raises these (never bare exceptions for user mistakes) so that the API can
turn any of them into the ARM error body `{"error": {"code", "message", "target"}}` that
Azure Resource Manager clients, the `azure-mgmt-scheduler` SDK included, know how to read.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any


class SchedulerError(Exception):
    """Base of all scheduler errors; `status` and `code` map to the HTTP answer."""

    status: int = 500
    code: str = "InternalServerError"

    def __init__(self, message: str, *, target: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.target = target

    def to_arm(self) -> dict[str, Any]:
        """The ARM error body for this error."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.target:
            error["target"] = self.target
        return {"error": error}


class ValidationError(SchedulerError, ValueError):
    """Bad input. `field` is the JSON path of the offending value, e.g.
    `recurrence.schedule.weekDays`; the message always starts with it so that a user
    reading only the message knows what to fix."""

    status = 400
    code = "BadRequest"

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message, target=field or None)
        self.field = field


class AuthenticationError(SchedulerError):
    status = 401
    code = "AuthenticationFailed"


class NotFoundError(SchedulerError):
    status = 404
    code = "ResourceNotFound"


class ConflictError(SchedulerError):
    """The request is valid but the resource's current state forbids it."""

    status = 409
    code = "Conflict"


class QuotaExceededError(ConflictError):
    """A job collection quota (`maxJobCount`, `maxRecurrence`, SKU limits) forbids it."""

    code = "QuotaExceeded"


class PreconditionFailedError(SchedulerError):
    """An `If-Match` ETag no longer matches: someone else changed the resource."""

    status = 412
    code = "PreconditionFailed"


def did_you_mean(word: str, options: Iterable[str]) -> str:
    """` (did you mean 'minutes'?)` when `word` is close to one of `options` (a singular
    `minute`, an old-API `monthly`), else empty: what a pasted example most often gets wrong."""
    spelled = {option.lower(): option for option in options}
    close = difflib.get_close_matches(word.lower(), spelled, n=1, cutoff=0.75)
    return f" (did you mean {spelled[close[0]]!r}?)" if close else ""
class ServiceUnavailableError(SchedulerError):
    """Something the API depends on (storage, its configuration) is not available right
    now; the client should try again after `retry_after` seconds (`Retry-After`)."""

    status = 503
    code = "ServiceUnavailable"

    def __init__(self, message: str, *, retry_after: int = 5) -> None:
        super().__init__(message)
        self.retry_after = retry_after
