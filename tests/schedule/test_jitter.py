"""Jitter offsets (`maxJitter`): stable per job and occurrence, whole seconds in
[0, maxJitter), spread across jobs (pure: no storage, no clock)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta, timezone

from scheduler_lib.schedule.jitter import jittered_start, max_jitter, offset

NINE = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
PT30S = timedelta(seconds=30)


def test_the_same_job_and_occurrence_always_get_the_same_offset() -> None:
    first = offset("sub|rg|coll|job", NINE, PT30S)
    assert offset("sub|rg|coll|job", NINE, PT30S) == first
    # The occurrence's instant, not its spelling, decides (any zone, same instant).
    berlin_summer = timezone(timedelta(hours=2))
    assert offset("sub|rg|coll|job", NINE.astimezone(berlin_summer), PT30S) == first


def test_offsets_are_whole_seconds_below_the_maximum() -> None:
    for minute in range(200):
        value = offset("a|b|c|d", NINE + timedelta(minutes=minute), PT30S)
        assert timedelta(0) <= value < PT30S and value.microseconds == 0


def test_500_jobs_at_nine_are_spread_over_the_window() -> None:
    """The point of it: 500 jobs due at 09:00 do not start in one second."""
    seconds = Counter(
        int(offset(f"sub|rg|coll|job{i}", NINE, PT30S).total_seconds()) for i in range(500)
    )
    assert set(seconds) == set(range(30))  # every second of the window is used
    assert max(seconds.values()) <= 35  # ~17 each: no second gets a crowd


def test_each_occurrence_of_a_job_gets_its_own_offset() -> None:
    offsets = {offset("a|b|c|d", NINE + timedelta(days=d), PT30S) for d in range(100)}
    assert len(offsets) > 20


def test_without_max_jitter_nothing_moves() -> None:
    assert max_jitter({}) == timedelta(0)
    assert jittered_start("a|b|c|d", timedelta(0), NINE) == NINE
    assert jittered_start("a|b|c|d", timedelta(seconds=1), NINE) == NINE  # [0, 1 s)
    moved = jittered_start("a|b|c|d", timedelta(hours=1), NINE)
    assert NINE <= moved < NINE + timedelta(hours=1)
