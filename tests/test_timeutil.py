"""One way to write a time: UTC with a `Z`, an aware time in another zone converted (the
job status used to relabel instead: `+02:00` kept, or a non-UTC time shown as if UTC)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from scheduler_lib.domain import JobDefinition
from scheduler_lib.domain.jobs import JobRecord
from scheduler_lib.timeutil import iso_z, utc_now
from scheduler_lib.wire.jobs import status_of

PARIS_SUMMER = timezone(timedelta(hours=2))


def test_iso_z_converts_other_offsets_to_utc() -> None:
    assert iso_z(datetime(2026, 7, 1, 11, 0, tzinfo=PARIS_SUMMER)) == "2026-07-01T09:00:00Z"
    assert iso_z(datetime(2026, 7, 1, 9, 0, 0, 500, tzinfo=UTC)) == "2026-07-01T09:00:00.000500Z"


def test_utc_now_is_aware_and_utc() -> None:
    assert utc_now().utcoffset() == timedelta(0)


def test_job_status_shows_times_in_utc_whatever_their_offset() -> None:
    at = datetime(2026, 7, 1, 11, 0, tzinfo=PARIS_SUMMER)
    record = JobRecord(
        subscription_id="s", resource_group="rg", collection_name="c", name="j",
        definition=JobDefinition({}), created_time=at, last_execution_time=at,
        next_execution_time=at,
    )  # fmt: skip
    status = status_of(record, at - timedelta(hours=1))
    assert status["lastExecutionTime"] == "2026-07-01T09:00:00Z"
    assert status["nextExecutionTime"] == "2026-07-01T09:00:00Z"
