"""Upcoming runs as the dispatcher will start them: each occurrence of the recurrence
engine, moved by the job's jitter offset (`schedule.jittered_start`, the very function
the dispatcher, the executor and the API's `nextExecutionTime` use, with the same identity:
the job's key). The first is `model.jitter.upcoming_occurrence`, GET's own (inside its jitter
window an occurrence is still the next run); it names the scheduled occurrence, never its
jittered start, so the offset is applied here exactly once per occurrence.

The timeline counts runs by their jittered start, per second in the 24-hour window, so a
herd spread by jitter inside one minute shows as spread when that minute is zoomed.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from scheduler_lib.domain import JobRecord
from scheduler_lib.errors import SchedulerError
from scheduler_lib.schedule import jittered_start
from scheduler_lib.wire.jitter import upcoming_occurrence


def when(at: datetime | None) -> str:
    return at.strftime("%Y-%m-%d %H:%M:%S UTC") if at else "—"


def jitter_label(occurrence: datetime, start: datetime) -> str:
    """`start` as a person reads it; when jitter moved it, also from what and by how much:
    "2026-03-05 09:00:17 UTC (09:00 +17 s jitter)"."""
    shift = int((start - occurrence).total_seconds())
    if not shift:
        return when(start)
    due = occurrence.strftime("%H:%M" if not occurrence.second else "%H:%M:%S")
    return f"{when(start)} ({due} +{shift} s jitter)"


@dataclass(frozen=True)
class Run:
    """One upcoming occurrence: when it is scheduled, and when it really starts."""

    occurrence: datetime
    start: datetime

    @property
    def label(self) -> str:
        return jitter_label(self.occurrence, self.start)


def upcoming(job: JobRecord, *, now: datetime) -> Iterator[Run]:
    """The job's runs from its next one on, lazily (one parse of its schedule)."""
    jitter = job.definition.max_jitter  # most jobs have none: no hash per run
    for occurrence in _occurrences(job, now=now):
        start = jittered_start(job.key, jitter, occurrence) if jitter else occurrence
        yield Run(occurrence, start)


def next_runs(job: JobRecord, *, now: datetime, count: int = 10) -> list[Run]:
    """The job's next `count` runs, from where the job stands (its next occurrence, and
    what is left of `count`)."""
    return list(itertools.islice(upcoming(job, now=now), count))


def _occurrences(job: JobRecord, *, now: datetime) -> Iterator[datetime]:
    # As GET's nextExecutionTime: inside its jitter window an occurrence is still next;
    # None for a job that is not Enabled.
    first = upcoming_occurrence(job, now)
    if first is None:
        return
    try:
        schedule = job.schedule
    except SchedulerError:
        yield first
        return
    left = None  # the next one has not run yet: it counts as left
    if schedule.count is not None:
        left = max(schedule.count - job.bookkeeping.occurrences, 1)
    yield from itertools.islice(schedule.executions_from(first), left)


@dataclass(frozen=True)
class Timeline:
    """Runs per bucket of the window; `seconds`: the busiest bucket second by second (when
    the bucket is a minute), where jitter's spread shows; `capped`: a job had more than the
    cap of runs in the window (then only its first ones are counted)."""

    buckets: list[tuple[datetime, int]]
    seconds: list[tuple[datetime, int]]
    capped: bool


def upcoming_buckets(
    jobs: list[JobRecord], *, now: datetime, span: timedelta, bucket: timedelta, cap: int
) -> Timeline:
    """Upcoming runs of `jobs` starting in [now, now + span), by jittered start, counted per
    `bucket`."""
    start = now.replace(second=0, microsecond=0)
    step = timedelta(seconds=1) if bucket == timedelta(minutes=1) else bucket
    fine = [0] * int(span / step)
    capped = False
    for job in jobs:
        within = itertools.takewhile(
            lambda run: run.occurrence < start + span, upcoming(job, now=now)
        )
        for runs, run in enumerate(within, start=1):
            index = int((run.start - start) / step)
            if 0 <= index < len(fine):
                fine[index] += 1
            if runs >= cap:
                capped = True
                break
    per = int(bucket / step)
    counts = [sum(fine[i : i + per]) for i in range(0, len(fine), per)]
    buckets = [(start + i * bucket, c) for i, c in enumerate(counts)]
    seconds: list[tuple[datetime, int]] = []
    if per > 1 and any(counts):
        peak = counts.index(max(counts))
        first = peak * per
        seconds = [(start + (first + i) * step, fine[first + i]) for i in range(per)]
    return Timeline(buckets, seconds, capped)
