"""Errors belong to their layer: domain and store errors carry no HTTP status; the API maps
each to its status, ARM code and headers in one place (api/errors.py)."""

from __future__ import annotations

import pytest

from scheduler_lib import errors
from scheduler_lib.api.errors import arm_body, arm_headers, http_status
from scheduler_lib.store.etag import ContentionError


@pytest.mark.parametrize(
    ("error", "status", "code"),
    [
        (errors.ValidationError("recurrence.interval", "must be at least 1"), 400, "BadRequest"),
        (errors.AuthenticationError("no key"), 401, "AuthenticationFailed"),
        (errors.NotFoundError("gone"), 404, "ResourceNotFound"),
        (errors.ConflictError("busy"), 409, "Conflict"),
        (ContentionError("kept changing"), 409, "Conflict"),
        (errors.QuotaExceededError("full"), 409, "QuotaExceeded"),
        (errors.PreconditionFailedError("changed"), 412, "PreconditionFailed"),
        (errors.ServiceUnavailableError("storage down", retry_after=7), 503, "ServiceUnavailable"),
        (errors.SchedulerError("a bug"), 500, "InternalServerError"),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, Exception) else None,
)
def test_each_error_maps_to_its_status_and_arm_code(
    error: errors.SchedulerError, status: int, code: str
) -> None:
    assert http_status(error) == status
    assert arm_body(error)["error"]["code"] == code
    assert not hasattr(error, "status") and not hasattr(error, "code")


def test_the_body_names_the_field_and_a_503_says_when_to_retry() -> None:
    body = arm_body(errors.ValidationError("recurrence.interval", "must be at least 1"))
    assert body == {"error": {"code": "BadRequest", "target": "recurrence.interval",
                              "message": "recurrence.interval: must be at least 1"}}  # fmt: skip
    unavailable = errors.ServiceUnavailableError("down", retry_after=7)
    assert arm_headers(unavailable) == {"Retry-After": "7"}
    assert arm_headers(errors.NotFoundError("gone")) == {}
