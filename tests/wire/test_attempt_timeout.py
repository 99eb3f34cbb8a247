"""The bounds of an HTTP action's `timeout` (wire/attempt_timeout.py) against what the
Functions host allows one execution: one attempt runs in one invocation, which host.json's
functionTimeout ends."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from scheduler_lib.actions import ACTION_TIMEOUT_SECONDS
from scheduler_lib.wire import attempt_timeout

ROOT = Path(__file__).resolve().parents[2]


def test_the_bound_leaves_the_invocation_room_within_host_json_function_timeout() -> None:
    text = json.loads((ROOT / "host.json").read_text())["functionTimeout"]
    hours, minutes, seconds = map(int, text.split(":"))
    function_timeout = timedelta(hours=hours, minutes=minutes, seconds=seconds)
    assert function_timeout == attempt_timeout.FUNCTION_TIMEOUT
    assert function_timeout >= attempt_timeout.MAX_TIMEOUT + attempt_timeout.INVOCATION_MARGIN
    assert timedelta(minutes=30) >= attempt_timeout.MAX_TIMEOUT  # Cloud Scheduler's bound


def test_the_default_is_the_60_seconds_every_action_had() -> None:
    assert (
        attempt_timeout.DEFAULT_TIMEOUT
        == timedelta(seconds=ACTION_TIMEOUT_SECONDS)
        == timedelta(seconds=60)
    )
    assert timedelta(seconds=15) == attempt_timeout.MIN_TIMEOUT
    assert attempt_timeout.seconds({"type": "Http"}) == 60.0
    assert attempt_timeout.seconds({"type": "Http", "timeout": "PT2M30S"}) == 150.0
