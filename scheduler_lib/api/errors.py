"""How the scheduler's errors look on the wire: the HTTP status and the ARM error body.

Domain and storage errors (`scheduler_lib.errors`) say what went wrong, not how HTTP spells
it; this is the one place that maps them to a status and to Azure Resource Manager's body
`{"error": {"code", "message", "target"}}`, which ARM clients (the `azure-mgmt-scheduler` SDK
included) know how to read.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from scheduler_lib.errors import (
    AuthenticationError,
    ConflictError,
    NotFoundError,
    PreconditionFailedError,
    QuotaExceededError,
    SchedulerError,
    ServiceUnavailableError,
    TooManyRequestsError,
    ValidationError,
)

#: Most specific first: a QuotaExceededError is a ConflictError with its own code.
_ARM: tuple[tuple[type[SchedulerError], int, str], ...] = (
    (QuotaExceededError, 409, "QuotaExceeded"),
    (ValidationError, 400, "BadRequest"),
    (AuthenticationError, 401, "AuthenticationFailed"),
    (NotFoundError, 404, "ResourceNotFound"),
    (ConflictError, 409, "Conflict"),
    (PreconditionFailedError, 412, "PreconditionFailed"),
    (TooManyRequestsError, 429, "TooManyRequests"),
    (ServiceUnavailableError, 503, "ServiceUnavailable"),
)


def _mapping(error: SchedulerError) -> tuple[int, str]:
    for kind, status, code in _ARM:
        if isinstance(error, kind):
            return status, code
    return 500, "InternalServerError"


def http_status(error: SchedulerError) -> int:
    """The HTTP status that answers `error`."""
    return _mapping(error)[0]


class ArmError(TypedDict):
    """The `error` object of an ARM error body: what every client (the SDKs, the portal,
    our dashboard) reads to say what went wrong."""

    code: str
    message: str
    target: NotRequired[str]  # the JSON path of the field at fault


class ArmErrorBody(TypedDict):
    error: ArmError


def arm_error(error: SchedulerError) -> ArmError:
    """The `error` object of the ARM error body (`target` only when the error names one)."""
    body: ArmError = {"code": _mapping(error)[1], "message": error.message}
    if error.target:
        body["target"] = error.target
    return body


def arm_body(error: SchedulerError) -> ArmErrorBody:
    """The whole ARM error body."""
    return {"error": arm_error(error)}


def arm_headers(error: SchedulerError) -> dict[str, str]:
    """Headers the answer carries besides the body's (`Retry-After` for a 503 or a 429)."""
    if isinstance(error, ServiceUnavailableError | TooManyRequestsError):
        return {"Retry-After": str(error.retry_after)}
    return {}
