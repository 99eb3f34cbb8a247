"""The schedule engine: a job's `recurrence`/`startTime` in, its occurrences out.

Knows no storage, queue or HTTP: `parse` validates and normalises the job's timing,
`calendar` expands one recurrence period into candidate instants, `recurrence` walks the
periods (seeking in constant time however far back the start lies), `timezones` resolves the
zone a schedule is evaluated in, `preview` renders the next runs for the CLI and the API.
"""

from scheduler_lib.schedule.jitter import MAX_JITTER, MAX_JITTER_LIMIT, jittered_start, max_jitter
from scheduler_lib.schedule.parse import FREQUENCIES, WEEKDAYS, JobTiming, parse_job_timing
from scheduler_lib.schedule.preview import (
    JOB_PROPERTIES,
    job_properties,
    preview_table,
    preview_with_reason,
    read_now,
    starts,
)
from scheduler_lib.schedule.recurrence import Schedule, parse_schedule
from scheduler_lib.schedule.timezones import resolve_zone

__all__ = [
    "FREQUENCIES",
    "JOB_PROPERTIES",
    "MAX_JITTER",
    "MAX_JITTER_LIMIT",
    "WEEKDAYS",
    "JobTiming",
    "Schedule",
    "jittered_start",
    "job_properties",
    "max_jitter",
    "parse_job_timing",
    "parse_schedule",
    "preview_table",
    "preview_with_reason",
    "read_now",
    "resolve_zone",
    "starts",
]
