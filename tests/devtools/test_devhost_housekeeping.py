"""The local host runs the daily housekeeping, as Azure's daily timer trigger does: its loop,
driven by the real `Runtime` with an injected clock, against real Azurite tables."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

import pytest

from devtools.devhost import housekeeping_loop
from scheduler_lib.config import Settings
from scheduler_lib.domain import ExecutorState
from scheduler_lib.housekeeping import DAILY_SCHEDULE, next_daily_run
from scheduler_lib.runtime import Runtime
from scheduler_lib.store.jobs import find_job, put_job
from tests.execution.harness import http_action, make_job

DAY = datetime(2026, 5, 10, tzinfo=UTC)


@pytest.mark.parametrize(
    ("now", "expected"),
    [
        pytest.param(DAY.replace(hour=3, minute=16, second=59), DAY.replace(hour=3, minute=17),
                     id="a-second-before"),
        pytest.param(DAY.replace(hour=3, minute=17), DAY.replace(day=11, hour=3, minute=17),
                     id="at-the-moment-means-tomorrow"),
        pytest.param(DAY.replace(hour=23), DAY.replace(day=11, hour=3, minute=17),
                     id="late-evening"),
        pytest.param(datetime(2026, 5, 10, 1, 0, tzinfo=timezone(timedelta(hours=-5))),
                     DAY.replace(day=11, hour=3, minute=17), id="other-offset-is-06-utc"),
    ],
)  # fmt: skip
def test_next_daily_run_is_the_next_0317_utc(now: datetime, expected: datetime) -> None:
    assert next_daily_run(now) == expected


def test_the_functions_timer_and_the_local_host_share_one_schedule() -> None:
    assert DAILY_SCHEDULE == "0 17 3 * * *"


def test_the_local_hosts_loop_runs_housekeeping_when_its_time_comes(settings: Settings) -> None:
    """A Completed job that ended 61 days before 03:17 is deleted by the loop's pass; the
    clock reads 0.2 s before 03:17 first, so the loop's wait is real but short."""
    at = DAY.replace(hour=3, minute=17)
    readings = iter([at - timedelta(seconds=0.2)])
    runtime = Runtime(settings, clock=lambda: next(readings, at + timedelta(seconds=1)))
    runtime.ensure_storage()
    job = make_job(runtime.store, http_action("http://127.0.0.1:9/"), state="Completed")
    ended = ExecutorState(ended_at=at - timedelta(days=61))
    put_job(runtime.store, replace(job, bookkeeping=replace(job.bookkeeping, executor=ended)))

    stop = threading.Event()
    loop = threading.Thread(target=housekeeping_loop, args=(runtime, stop))
    loop.start()
    try:
        deadline = time.monotonic() + 30
        while find_job(runtime.store, job.key) is not None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert find_job(runtime.store, job.key) is None
    finally:
        stop.set()
        loop.join(timeout=30)
    assert not loop.is_alive()
