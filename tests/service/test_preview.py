"""The schedule preview as a use case (`service/preview.py`), called as the dashboard's editor
and `POST /api/preview` call it: pure (the clock's reading is an argument), and what is wrong
comes back as the scheduler's own errors, each front end rendering them its way (the API as
ARM error objects: tests/api/test_preview_api.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from scheduler_lib.errors import SchedulerError, ValidationError
from scheduler_lib.service.preview import preview_schedule

NOW = datetime(2026, 3, 4, 8, 0, tzinfo=UTC)


def test_the_next_executions_from_the_given_instant() -> None:
    body = {"startTime": "2026-03-04T09:00:00Z", "recurrence": {"frequency": "Day"}, "count": 2}
    result = preview_schedule(body, clock_now=NOW)
    assert result["executions"] == ["2026-03-04T09:00:00Z", "2026-03-05T09:00:00Z"]
    assert result["errors"] == []


def test_an_invalid_schedule_is_an_answer_naming_the_field_not_a_failure() -> None:
    body = {"recurrence": {"frequency": "Fortnight"}}
    result = preview_schedule(body, clock_now=NOW)
    assert result["executions"] == []
    [error] = result["errors"]
    assert isinstance(error, SchedulerError)  # no HTTP shape: the front end renders it
    assert error.target is not None and error.target.startswith("recurrence")


def test_a_whole_job_names_its_fields_under_properties() -> None:
    body = {"properties": {"recurrence": {"frequency": "Fortnight"}}}
    [error] = preview_schedule(body, clock_now=NOW)["errors"]
    assert error.target is not None and error.target.startswith("properties.recurrence")


def test_a_body_that_is_no_preview_request_raises() -> None:
    with pytest.raises(ValidationError) as caught:
        preview_schedule({"count": 0}, clock_now=NOW)
    assert caught.value.target == "count"
