"""Schedules in plain words, from the canonical recurrence the engine runs."""

from __future__ import annotations

import pytest

from scheduler_lib.dashboard.words import describe
from scheduler_lib.domain import JobDefinition
from scheduler_lib.wire import timing

CASES = [
    ({"frequency": "Week", "schedule": {"weekDays": ["Monday", "Tuesday", "Wednesday",
      "Thursday", "Friday"], "hours": [9], "minutes": [0]}, "timeZone": "Europe/Berlin"},
     "every weekday at 09:00 Europe/Berlin"),
    ({"frequency": "Month", "schedule": {"monthlyOccurrences": [{"day": "friday",
      "occurrence": -1}], "hours": [9], "minutes": [0]}},
     "every month on the last Friday at 09:00 UTC"),
    ({"frequency": "Month", "interval": 3, "schedule": {"monthDays": [1, 15, -1]}},
     "every 3 months on day 1, 15 and last UTC"),
    ({"frequency": "Hour", "interval": 2, "schedule": {"minutes": [15, 45]}},
     "every 2 hours at minute 15 and 45 UTC"),
    ({"frequency": "Day", "schedule": {"hours": [6, 18], "minutes": [0, 30]},
      "timeZone": "Eastern Standard Time", "endTime": "2027-01-01T00:00:00Z"},
     "every day at 06:00, 06:30, 18:00 and 18:30 America/New_York until 2027-01-01T00:00:00Z"),
    ({"frequency": "Week", "interval": 2, "schedule": {"weekDays": ["Saturday", "Sunday"]}},
     "every 2 weeks on Saturday and Sunday UTC"),
    ({"frequency": "Year", "schedule": {"months": [1, 7], "monthDays": [1]}},
     "every year on day 1 in January and July UTC"),
    ({"frequency": "Day", "schedule": {"hours": [9]}},
     "every day at 09:mm (mm: the start's minute) UTC"),
    ({"frequency": "Minute", "interval": 5, "count": 10}, "every 5 minutes UTC (10 times)"),
    ({"frequency": "Minute", "count": 1}, "every minute UTC (once)"),
]  # fmt: skip


@pytest.mark.parametrize("recurrence, words", CASES)
def test_recurrences_in_words(recurrence, words) -> None:
    canonical = timing.normalize_recurrence(recurrence, "recurrence")
    assert describe(JobDefinition({"recurrence": canonical})) == words


def test_a_job_without_recurrence_runs_once() -> None:
    once = JobDefinition({"startTime": "2026-05-01T10:00:00Z"})
    assert describe(once) == "once, at 2026-05-01T10:00:00Z"
    assert describe(JobDefinition({})) == "once, when created"
