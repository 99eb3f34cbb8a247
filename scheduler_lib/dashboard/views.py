"""View-models: what each row of a page shows, read through the API's own services and
stores, so the dashboard applies the same rules (secrets redacted by `job_to_wire`, the
same schedule engine) and sees the same errors as the REST API."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from markupsafe import Markup

from scheduler_lib.api.context import ApiContext
from scheduler_lib.api.job_schedule import schedule_of
from scheduler_lib.dashboard import svg
from scheduler_lib.dashboard.words import describe
from scheduler_lib.domain import JobRecord, JobState
from scheduler_lib.errors import SchedulerError
from scheduler_lib.execution import ExecutionMessage
from scheduler_lib.model import arm
from scheduler_lib.store import HistoryEntry, list_history
from scheduler_lib.timeutil import iso_z

#: Outcomes a sparkline shows; a history page shows 100 entries at a time.
SPARK = 20
HISTORY_PAGE = 100
_STATUS = re.compile(r"Response from host '[^']*': '(\d{3})'")
_READERS = 8  # history reads of a page's jobs in parallel (each is one small query)


def when(at: datetime | None) -> str:
    return at.strftime("%Y-%m-%d %H:%M:%S UTC") if at else "—"


@dataclass(frozen=True)
class JobRow:
    name: str
    state: str
    schedule: str
    next_run: str
    last_run: str
    last_outcome: str
    sparkline: Markup


def recent(ctx: ApiContext, job: JobRecord, count: int = SPARK) -> list[HistoryEntry]:
    """A job's newest `count` history entries (newest first)."""
    return list_history(ctx.store, job.history_key, page_size=count)[0]


def job_rows(ctx: ApiContext, jobs: list[JobRecord], *, now: datetime) -> list[JobRow]:
    """One row per job; their histories are read in parallel (one query each)."""
    with ThreadPoolExecutor(max_workers=_READERS) as pool:
        histories = list(pool.map(lambda job: recent(ctx, job), jobs))
    return [_row(job, entries, now) for job, entries in zip(jobs, histories, strict=True)]


def _row(job: JobRecord, entries: list[HistoryEntry], now: datetime) -> JobRow:
    last = entries[0] if entries else None
    return JobRow(
        name=job.name,
        state=job.state,
        schedule=describe(job.definition),
        next_run=when(job.upcoming_execution(now)) if job.state == JobState.ENABLED else "—",
        last_run=when(last.start_time) if last else "never",
        last_outcome=last.status if last else "",
        sparkline=svg.sparkline([e.status for e in reversed(entries)]),
    )


def next_runs(job: JobRecord, *, now: datetime, count: int = 10) -> list[datetime]:
    """The job's next `count` executions from the engine, from where the job stands (its
    next execution, and what is left of `count`)."""
    return list(itertools.islice(upcoming(job, now=now), count))


def upcoming(job: JobRecord, *, now: datetime) -> Iterator[datetime]:
    """The job's executions from its next one on, lazily (one parse of its schedule)."""
    first = job.upcoming_execution(now) if job.state == JobState.ENABLED else None
    if first is None:
        return
    try:
        schedule = schedule_of(job.definition, job.created_time)
    except SchedulerError:
        yield first
        return
    left = None  # the next one has not run yet: it counts as left
    if schedule.count is not None:
        left = max(schedule.count - job.bookkeeping.occurrences, 1)
    for at in schedule.executions_from(first):
        if left is not None and left <= 0:
            return
        yield at
        left = None if left is None else left - 1


@dataclass(frozen=True)
class HistoryRow:
    entry: HistoryEntry
    duration: float
    lateness: float
    response_status: str
    headers: dict[str, str]

    @property
    def started(self) -> str:
        return when(self.entry.start_time)


def history_rows(job: JobRecord, entries: list[HistoryEntry]) -> list[HistoryRow]:
    return [_history_row(job, e) for e in entries]


def _history_row(job: JobRecord, entry: HistoryEntry) -> HistoryRow:
    found = _STATUS.search(entry.message)
    return HistoryRow(
        entry=entry,
        duration=(entry.end_time - entry.start_time).total_seconds(),
        lateness=(entry.start_time - entry.expected_execution_time).total_seconds(),
        response_status=found.group(1) if found else "—",
        headers=identifying_headers(job, entry),
    )


def identifying_headers(job: JobRecord, entry: HistoryEntry) -> dict[str, str]:
    """The headers the scheduler sent that identify this attempt (HTTP actions): the job,
    its collection, the expected time and, for a scheduled occurrence, its execution tag
    (derived from job and time, so it is the one the target saw; a manual run's is random
    and not recorded)."""
    where = (job.subscription_id, job.resource_group, job.collection_name)
    headers = {
        "x-ms-scheduler-jobid": arm.job_id(*where, job.name),
        "x-ms-scheduler-jobcollectionid": arm.collection_id(*where),
        "x-ms-scheduler-expected-execution-time": iso_z(entry.expected_execution_time),
    }
    if entry.repeat_count:
        tag = ExecutionMessage.scheduled(job.key, entry.expected_execution_time, 1).execution_tag
        headers["x-ms-execution-tag"] = tag
    return headers


def chart(rows: list[HistoryRow]) -> Markup:
    points = [
        svg.Point(
            at=r.entry.expected_execution_time,
            lateness=r.lateness,
            duration=r.duration,
            status=r.entry.status,
            label=when(r.entry.start_time),
        )
        for r in rows
        if r.entry.action_name == "MainAction" and r.entry.status != "Postponed"
    ]
    return svg.execution_chart(points)


def upcoming_buckets(
    jobs: list[JobRecord], *, now: datetime, span: timedelta, bucket: timedelta, cap: int
) -> tuple[list[tuple[datetime, int]], bool]:
    """Upcoming runs of `jobs` in [now, now + span) counted per `bucket`, and whether some
    job had more than `cap` runs in the window (then only its first `cap` are counted)."""
    start = now.replace(second=0, microsecond=0)
    slots = int(span / bucket)
    counts = [0] * slots
    capped = False
    for job in jobs:
        until = itertools.takewhile(lambda at: at < start + span, upcoming(job, now=now))
        for runs, at in enumerate(until, start=1):
            index = int((at - start) / bucket)
            if 0 <= index < slots:
                counts[index] += 1
            if runs >= cap:
                capped = True
                break
    return [(start + i * bucket, c) for i, c in enumerate(counts)], capped


def json_pretty(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=False)
