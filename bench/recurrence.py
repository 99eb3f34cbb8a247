"""Benchmark of the recurrence engine: `.venv/bin/python bench/recurrence.py`.

Two questions, each answered against a baseline measured in the same run:

1. Does the first execution cost the same whether startTime was a day or 20 years ago?
   (The engine must seek to the period containing "now", never replay from startTime.)
   Target: 20-years/1-day ratio under 2.
2. How fast are the next 1000 executions, against `dateutil.rrule` and `croniter` computing
   the same schedules (their results are checked equal first)? Target: at least 1.5x faster
   than dateutil.rrule on every schedule.

Prints medians as a table and exits 1 if a target is missed.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import islice
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from croniter import croniter
from dateutil import rrule

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from scheduler_lib.schedule.recurrence import occurrences, parse_schedule

NOW = datetime(2026, 3, 4, 10, 0, tzinfo=UTC)
START = datetime(2026, 3, 4, 0, 0, tzinfo=UTC)
NEW_YORK = ZoneInfo("America/New_York")
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
N = 1000


@dataclass(frozen=True)
class Case:
    name: str
    recurrence: dict[str, Any]
    rrule: Callable[[datetime], rrule.rrule]  # dtstart -> the same schedule as an RRULE
    cron: str
    zone: ZoneInfo | None = None

    def job(self, start: datetime) -> dict[str, Any]:
        local = start.astimezone(self.zone).replace(tzinfo=None) if self.zone else start
        return {"startTime": local.isoformat(), "recurrence": self.recurrence}


CASES = [
    Case("every 15 minutes", {"frequency": "Minute", "interval": 15},
         lambda s: rrule.rrule(rrule.MINUTELY, interval=15, dtstart=s), "*/15 * * * *"),
    Case("every 15 minutes (Day, minutes 0/15/30/45)",
         {"frequency": "Day", "schedule": {"minutes": [0, 15, 30, 45]}},
         lambda s: rrule.rrule(rrule.MINUTELY, interval=15, dtstart=s), "*/15 * * * *"),
    Case("weekdays at 9:00 and 17:00",
         {"frequency": "Week", "schedule": {"weekDays": WEEKDAYS, "hours": [9, 17], "minutes": 0}},
         lambda s: rrule.rrule(rrule.WEEKLY, byweekday=range(5), byhour=(9, 17), byminute=0,
                               bysecond=0, dtstart=s),
         "0 9,17 * * 1-5"),
    Case("last Friday of the month, 9:00",
         {"frequency": "Month", "schedule": {"hours": 9, "minutes": 0,
                                             "monthlyOccurrences": [{"day": "Friday",
                                                                     "occurrence": -1}]}},
         lambda s: rrule.rrule(rrule.MONTHLY, byweekday=rrule.FR(-1), byhour=9, byminute=0,
                               bysecond=0, dtstart=s),
         "0 9 * * L5"),
    Case("monthDays 1, 15, -1 at 9:00",
         {"frequency": "Month", "schedule": {"monthDays": [1, 15, -1], "hours": 9, "minutes": 0}},
         lambda s: rrule.rrule(rrule.MONTHLY, bymonthday=(1, 15, -1), byhour=9, byminute=0,
                               bysecond=0, dtstart=s),
         "0 9 1,15,L * *"),
    Case("weekdays at 9:00 New York",
         {"frequency": "Week", "timeZone": "America/New_York",
          "schedule": {"weekDays": WEEKDAYS, "hours": 9, "minutes": 0}},
         lambda s: rrule.rrule(rrule.WEEKLY, byweekday=range(5), byhour=9, byminute=0,
                               bysecond=0, dtstart=s),
         "0 9 * * 1-5", NEW_YORK),
]  # fmt: skip


def medians(calls: list[Callable[[], object]], samples: int, number: int) -> list[float]:
    """Per call, the median over `samples` of the mean time of `number` back-to-back calls.
    The calls take turns within each sample, so a change in machine load hits all alike."""
    times: list[list[float]] = [[] for _ in calls]
    for _ in range(samples):
        for call, spent in zip(calls, times, strict=True):
            began = time.perf_counter()
            for _ in range(number):
                call()
            spent.append((time.perf_counter() - began) / number)
    return [statistics.median(spent) for spent in times]


def engine_next(case: Case) -> list[datetime]:
    return list(islice(occurrences(case.job(START), now=START), N))


def rrule_next(case: Case) -> list[datetime]:
    dtstart = START.astimezone(case.zone) if case.zone else START.replace(tzinfo=None)
    return list(islice(case.rrule(dtstart), N))


def croniter_next(case: Case) -> list[datetime]:
    start = START.astimezone(case.zone) if case.zone else START.replace(tzinfo=None)
    schedule = croniter(case.cron, start - timedelta(seconds=1))
    return [schedule.get_next(datetime) for _ in range(N)]


def check_same(case: Case) -> None:
    """The three compute the same executions, so the timings compare like with like."""
    ours = engine_next(case)
    for name, theirs in (("rrule", rrule_next(case)), ("croniter", croniter_next(case))):
        if case.zone is None:
            theirs = [t.replace(tzinfo=UTC) for t in theirs]
        if ours != theirs:
            raise SystemExit(f"{case.name}: engine and {name} disagree; not comparable")


def first_execution_table() -> bool:
    print("First execution: parse_schedule(job, now).first(), startTime 1 day vs 20 years "
          "before now (median µs)")  # fmt: skip
    print(f"{'schedule':44} {'1 day':>9} {'20 years':>9} {'ratio':>6}")
    ok = True
    for case in CASES:
        jobs = [case.job(NOW - timedelta(days=1)), case.job(NOW - timedelta(days=20 * 365))]
        calls = [lambda job=job: parse_schedule(job, now=NOW).first() for job in jobs]
        costs = medians(calls, samples=51, number=100)
        ratio = costs[1] / costs[0]
        ok &= ratio < 2
        print(f"{case.name:44} {costs[0] * 1e6:9.1f} {costs[1] * 1e6:9.1f} {ratio:6.2f}")
    return ok


def next_executions_table() -> bool:
    print(f"\nNext {N} executions (median ms; x = how many times faster the engine is)")
    print(f"{'schedule':44} {'engine':>7} {'rrule':>7} {'croniter':>9} {'x rrule':>8} "
          f"{'x cron':>7}")  # fmt: skip
    ok = True
    for case in CASES:
        check_same(case)
        pair = [lambda case=case: engine_next(case), lambda case=case: rrule_next(case)]
        ours, theirs = medians(pair, samples=31, number=3)
        (cron,) = medians([lambda case=case: croniter_next(case)], samples=5, number=1)
        ok &= theirs / ours >= 1.5
        print(f"{case.name:44} {ours * 1e3:7.2f} {theirs * 1e3:7.2f} {cron * 1e3:9.1f} "
              f"{theirs / ours:7.1f}x {cron / ours:6.0f}x")  # fmt: skip
    return ok


def main() -> int:
    print(f"Python {sys.version.split()[0]}, now = {NOW:%Y-%m-%d %H:%M}Z\n")
    seeks = first_execution_table()
    lists = next_executions_table()
    print(f"\nseek cost independent of startTime (ratio < 2): {'met' if seeks else 'MISSED'}")
    print(f"at least 1.5x faster than dateutil.rrule: {'met' if lists else 'MISSED'}")
    return 0 if seeks and lists else 1


if __name__ == "__main__":
    sys.exit(main())
