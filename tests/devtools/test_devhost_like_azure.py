"""Where the local host used to differ from the Functions host, it now does what Azure does:

- a message whose function failed is retried after host.json's `queues.visibilityTimeout`
  (read from host.json, not a second constant), as the storage service itself reports;
- a timer with `use_monitor=True` (the dispatcher, the housekeeping) runs at start-up only if
  an occurrence was missed since its last recorded run, never merely because the host started;
- the queue names the triggers bind to are required app settings: without them the host
  stops at start-up naming the missing one, and `make run` sets them itself.

Real `Runtime`, real Azurite, the hosts in threads or in their own processes."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from devtools import devhost, local_run
from devtools.azurite import ROOT, Azurite, free_port
from devtools.timer_monitor import ScheduleStatus, TimerMonitor
from scheduler_lib.config import Settings
from scheduler_lib.housekeeping import next_daily_run
from scheduler_lib.runtime import Runtime
from scheduler_lib.store import get_dispatcher_state
from scheduler_lib.wire.durations import parse_time_to_live
from tests.devtools.support import STARTUP, devhost_env

NOON = datetime(2026, 6, 1, 12, 0, 30, tzinfo=UTC)
QUEUES = json.loads((ROOT / "host.json").read_text())["extensions"]["queues"]


def test_a_failed_message_is_retried_after_host_jsons_visibility_timeout(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    runtime = Runtime(settings)
    runtime.ensure_storage()
    runtime.queue.send_body("not a message")  # the executor raises on it: a failed invocation
    [received] = runtime.queue.receive(max_messages=1)
    before = datetime.now(UTC)
    with caplog.at_level(logging.ERROR, logger="scheduler.devhost"):
        devhost.process_message(runtime, received)
    [record] = [r for r in caplog.records if "will be retried" in r.getMessage()]
    visible_at = record.args[1]  # the queue service's own answer
    delay = parse_time_to_live(QUEUES["visibilityTimeout"])
    assert delay == timedelta(seconds=30)
    assert before + delay - timedelta(seconds=2) <= visible_at <= datetime.now(UTC) + delay
    assert QUEUES["maxDequeueCount"] == devhost.MAX_DEQUEUE_COUNT


def _run_loop(loop: Callable[..., None], runtime: Runtime, until: Callable[[], bool]) -> None:
    """Run a timer loop in its own thread until `until()` holds (what it records in storage
    says it got past start-up), then stop it and wait for it to end."""
    stop = threading.Event()
    thread = threading.Thread(target=loop, args=(runtime, stop))
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not until() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert until(), "the loop recorded nothing at start-up"
    finally:
        stop.set()
        thread.join(timeout=30)
    assert not thread.is_alive()


def _last_run(monitor: TimerMonitor) -> datetime | None:
    status = monitor.status()
    return status.last if status else None


def _dispatcher(runtime: Runtime) -> TimerMonitor:
    return TimerMonitor(runtime.store, "dispatcher", devhost.next_minute)


def test_a_first_start_records_the_next_tick_and_does_not_tick(settings: Settings) -> None:
    """No status recorded (a new deployment): the host waits for the schedule."""
    runtime = Runtime(settings, clock=lambda: NOON)
    runtime.ensure_storage()
    monitor = _dispatcher(runtime)
    _run_loop(devhost.dispatcher_loop, runtime, until=lambda: monitor.status() is not None)
    first = NOON.replace(second=0) + timedelta(minutes=1)
    assert monitor.status() == ScheduleStatus(None, first, NOON)
    assert get_dispatcher_state(runtime.store).last_tick_at is None


def test_a_restart_before_the_next_tick_does_not_tick(settings: Settings) -> None:
    readings: list[datetime] = []

    def clock() -> datetime:
        readings.append(NOON)
        return NOON

    runtime = Runtime(settings, clock=clock)
    runtime.ensure_storage()
    monitor = _dispatcher(runtime)
    ran = NOON.replace(second=0)
    monitor.save(ScheduleStatus(ran, ran + timedelta(minutes=1), ran))
    # Nothing missed, nothing written: once the loop has read the clock it has decided (a
    # tick at start-up would have read it too, and recorded itself before the loop ends).
    _run_loop(devhost.dispatcher_loop, runtime, until=lambda: bool(readings))
    assert get_dispatcher_state(runtime.store).last_tick_at is None
    assert monitor.status() == ScheduleStatus(ran, ran + timedelta(minutes=1), ran)


def test_a_missed_tick_runs_at_start_up_and_is_recorded(settings: Settings) -> None:
    """The host was down over 11:59 and 12:00: one tick at start-up (its cursor covers the
    missed minutes), recorded as the last run, then the schedule."""
    runtime = Runtime(settings, clock=lambda: NOON)
    runtime.ensure_storage()
    monitor = _dispatcher(runtime)
    last = NOON - timedelta(minutes=3)
    monitor.save(ScheduleStatus(last, devhost.next_minute(last), last))
    _run_loop(devhost.dispatcher_loop, runtime, until=lambda: _last_run(monitor) == NOON)
    assert get_dispatcher_state(runtime.store).last_tick_at == NOON
    assert monitor.status() == ScheduleStatus(NOON, devhost.next_minute(NOON), NOON)


def test_a_missed_housekeeping_day_runs_at_start_up(settings: Settings) -> None:
    """The same monitor on the daily timer: a host down over 03:17 sweeps at start-up
    (before, it waited until the next 03:17)."""
    runtime = Runtime(settings, clock=lambda: NOON)
    runtime.ensure_storage()
    monitor = TimerMonitor(runtime.store, "housekeeping", next_daily_run)
    yesterday = NOON - timedelta(days=1)
    monitor.save(ScheduleStatus(yesterday, next_daily_run(yesterday), yesterday))
    _run_loop(devhost.housekeeping_loop, runtime, until=lambda: _last_run(monitor) == NOON)
    assert monitor.status() == ScheduleStatus(NOON, next_daily_run(NOON), NOON)


@pytest.mark.parametrize("missing", ["SCHEDULER_EXECUTION_QUEUE", "SCHEDULER_DISPATCH_QUEUE"])
def test_the_local_host_stops_at_start_up_without_a_queue_setting(
    missing: str, azurite: Azurite, settings: Settings
) -> None:
    """Before, it ran on a default queue name; the Functions host refuses to start."""
    result = subprocess.run(
        [sys.executable, "-m", "devtools.devhost", "--port", str(free_port())],
        cwd=ROOT,
        env=devhost_env(azurite, settings, **{missing: None}),
        capture_output=True,
        text=True,
        timeout=STARTUP,  # only bounds a hang: under load the imports alone took over 30 s
    )
    assert result.returncode != 0
    [line] = result.stderr.strip().splitlines()
    assert missing in line and "not set" in line


def test_make_run_sets_the_queue_settings_of_the_example_local_settings() -> None:
    """`make run` works out of the box: it sets what the host requires, with the values that
    local.settings.json.example lists for Core Tools."""
    example = json.loads((ROOT / "local.settings.json.example").read_text())["Values"]
    env = local_run.app_settings({"SCHEDULER_API_KEYS": "k"})
    for name in ("SCHEDULER_EXECUTION_QUEUE", "SCHEDULER_DISPATCH_QUEUE"):
        assert env[name] == example[name]
    assert Settings.from_env(env).execution_queue_name == example["SCHEDULER_EXECUTION_QUEUE"]
    mine = local_run.app_settings({"SCHEDULER_EXECUTION_QUEUE": "mine"})
    assert mine["SCHEDULER_EXECUTION_QUEUE"] == "mine"  # a setting of the user's is kept
