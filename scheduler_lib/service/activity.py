"""The overview's charts: outcomes per hour and start lateness (p50, p99) over the last 24
hours and the last 7 days, from the history table.

Why the history and not the metrics rows (`store/metrics_rows.py`): those hold each
instance's counters *cumulative since it started* (and the retired instances' sum), with no
time in them, so they cannot say what happened in a given hour or in the last 24 hours;
their lateness is a histogram of fixed buckets, so a p99 would only be a bucket's bound.
History entries hold each attempt's start and scheduled time, so per-hour counts and exact
percentiles come from one bounded read (`dashboard_reads.recent_history`: server-filtered
on `StartTime`, at most `WEEK_LIMIT` rows, projected to seven columns). Beyond that cap the
page says "at least" and the figures are those of the rows read.

Lateness, as the job page computes it: start time minus the scheduled (expected) time, of
the first attempt of each scheduled occurrence (`MainAction`, retry 0, an occurrence number;
not a manual run, a retry, a postponed or a skipped occurrence). Percentiles are nearest-rank.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from scheduler_lib.domain import HistoryStatus
from scheduler_lib.store.dashboard_reads import RecentEntry

#: History rows one overview reads at most (7 days across all jobs).
WEEK_LIMIT = 20000
DAY, WEEK = timedelta(days=1), timedelta(days=7)
HOUR = timedelta(hours=1)
#: Outcomes counted apart per hour; anything else counts as "Other".
OUTCOMES = ("Completed", "Failed", "Postponed", "Skipped")


@dataclass
class Hour:
    """One hour's outcomes (history entries by status) and its first attempts' lateness."""

    start: datetime
    counts: dict[str, int] = field(default_factory=dict)
    lateness: list[float] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def p50(self) -> float | None:
        return percentile(self.lateness, 50)

    @property
    def p99(self) -> float | None:
        return percentile(self.lateness, 99)


@dataclass(frozen=True)
class Window:
    """The last 24 hours or 7 days, per hour, oldest first."""

    name: str  # "24h" or "7d"
    hours: list[Hour]
    p50: float | None  # over the window's first attempts (seconds); None: none ran
    p99: float | None
    occurrences: int  # first attempts of scheduled occurrences: what the percentiles cover

    def count(self, status: str) -> int:
        return sum(h.counts.get(status, 0) for h in self.hours)


def percentile(values: Sequence[float], p: float) -> float | None:
    """Nearest-rank percentile: the smallest value with at least p% of the values at or
    below it (so a p99 of 100 values is the 99th smallest, not an interpolation)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(math.ceil(p / 100 * len(ordered)), 1) - 1]


def first_attempt(entry: RecentEntry) -> bool:
    """The first attempt of a scheduled occurrence that ran (a manual run, a retry, an
    errorAction, a postponement or a skipped occurrence did not run as dispatched)."""
    return (
        entry.action_name == "MainAction"
        and entry.retry_count == 0
        and entry.repeat_count > 0
        and entry.status not in (HistoryStatus.POSTPONED, HistoryStatus.SKIPPED)
    )


def windows(entries: Sequence[RecentEntry], *, now: datetime) -> list[Window]:
    """The 24-hour and the 7-day window of `entries` (one read of the last 7 days). Hours
    are whole UTC hours; the oldest is the one that holds `now` minus the span."""
    return [_window(name, entries, now, span) for name, span in (("24h", DAY), ("7d", WEEK))]


def _window(name: str, entries: Sequence[RecentEntry], now: datetime, span: timedelta) -> Window:
    since = now - span
    first = since.replace(minute=0, second=0, microsecond=0)
    count = math.ceil((now - first) / HOUR) or 1
    hours = [Hour(first + i * HOUR) for i in range(count)]
    late: list[float] = []
    for entry in entries:
        if not since <= entry.start_time <= now:
            continue
        hour = hours[min(int((entry.start_time - first) / HOUR), count - 1)]
        status = entry.status if entry.status in OUTCOMES else "Other"
        hour.counts[status] = hour.counts.get(status, 0) + 1
        if first_attempt(entry):
            seconds = (entry.start_time - entry.expected_time).total_seconds()
            hour.lateness.append(seconds)
            late.append(seconds)
    return Window(name, hours, percentile(late, 50), percentile(late, 99), len(late))
