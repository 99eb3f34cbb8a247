"""View-models: what each row of a page shows, read through the use cases (`service`), so
the dashboard applies the same rules as the REST API (secrets redacted by `job_to_wire`,
the same schedule engine) and sees the same errors."""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from markupsafe import Markup

from scheduler_lib.dashboard import runs, svg
from scheduler_lib.dashboard.runs import when
from scheduler_lib.dashboard.words import FIELD, describe
from scheduler_lib.domain import JobRecord
from scheduler_lib.domain.definition import PAUSE_AFTER, PAUSE_NOTE
from scheduler_lib.domain.messages import BACKFILL, CATCH_UP, ExecutionMessage
from scheduler_lib.service.context import ApiContext
from scheduler_lib.service.lists import HistoryEntry, history_page
from scheduler_lib.timeutil import iso_z
from scheduler_lib.wire import arm
from scheduler_lib.wire.shapes import JSONObject, as_object

#: Outcomes a sparkline shows; a history page shows 100 entries at a time.
SPARK = 20
HISTORY_PAGE = 100
#: Notifications a job page lists (newest first).
NOTICES_SHOWN = 20
_STATUS = re.compile(r"Response from host '[^']*': '(\d{3})'")
_LATE = re.compile(rf"\[({CATCH_UP}|{BACKFILL})\] ")
_READERS = 8  # history reads of a page's jobs in parallel (each is one small query)


@dataclass(frozen=True)
class JobRow:
    name: str
    state: str
    schedule: str
    next_run: str
    last_run: str
    last_outcome: str
    sparkline: Markup
    tags: str = ""


def recent(ctx: ApiContext, job: JobRecord, count: int = SPARK) -> list[HistoryEntry]:
    """A job's newest `count` history entries (newest first)."""
    return history_page(ctx, job, page_size=count)[0]


def job_rows(ctx: ApiContext, jobs: list[JobRecord], *, now: datetime) -> list[JobRow]:
    """One row per job; their histories are read in parallel (one query each)."""
    with ThreadPoolExecutor(max_workers=_READERS) as pool:
        histories = list(pool.map(lambda job: recent(ctx, job), jobs))
    return [_row(job, entries, now) for job, entries in zip(jobs, histories, strict=True)]


def _row(job: JobRecord, entries: list[HistoryEntry], now: datetime) -> JobRow:
    last = entries[0] if entries else None
    next_run = next(runs.upcoming(job, now=now), None)
    return JobRow(
        name=job.name,
        state=job.state,
        schedule=describe(job.definition),
        next_run=next_run.label if next_run else "—",
        last_run=when(last.start_time) if last else "never",
        last_outcome=last.status if last else "",
        sparkline=svg.sparkline([e.status for e in reversed(entries)]),
        tags=", ".join(f"{k}={v}" for k, v in sorted(job.definition.tags.items())),
    )


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

    @property
    def late_run(self) -> str:
        """The mark "CatchUp" or "Backfill" of a run of a missed or past occurrence (its history
        message starts with the executor's `[CatchUp] ` / `[Backfill] ` mark), else ""."""
        found = _LATE.match(self.entry.message)
        return found.group(1) if found else ""

    @property
    def reason(self) -> str:
        """Why a Skipped or Postponed occurrence did not run: its history message."""
        return self.entry.message if self.entry.status in svg.NOT_RUN else ""


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
    if entry.repeat_count or _LATE.match(entry.message):  # a late run keeps its tag
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
        if r.entry.action_name == "MainAction"
    ]
    return svg.execution_chart(points)


@dataclass(frozen=True)
class Pause:
    """Why a Disabled job is paused: its pause note, and whether the scheduler paused it
    (its stop-after-failures count reached by its streak, `JobRecord.consecutive_failures`)."""

    note: str
    failures: int
    after: int | None

    @property
    def by_failures(self) -> bool:
        return self.after is not None and self.failures >= self.after


def pause_of(properties: JSONObject) -> Pause:
    """From a job's wire `properties` (api-version 2026-12-01)."""
    note = properties.get(PAUSE_NOTE)
    failures = as_object(properties.get("status")).get(FIELD.consecutive_failures)
    after = properties.get(PAUSE_AFTER)
    return Pause(
        note=note if isinstance(note, str) else "",
        failures=failures if isinstance(failures, int) else 0,
        after=after if isinstance(after, int) else None,
    )


def json_pretty(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=False)
