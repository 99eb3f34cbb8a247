"""`SCHEDULER_PRECISION`: with `second` (the default) a scheduled occurrence's message becomes
visible 1-2 s before its second (the executor holds it until then); with `minute` at its
second, never earlier, so no invocation waits. Real Azurite queue: the delay is the one the
queue service reports for the message it stored."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from scheduler_lib.config import Settings
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.errors import ValidationError
from scheduler_lib.precision import Precision, window_end
from scheduler_lib.store.execution_queue import ExecutionQueue

NOW = datetime(2026, 3, 4, 9, 0, 0, 300_000, tzinfo=UTC)
START = NOW + timedelta(seconds=5)  # 5.0 s ahead: not a whole number of seconds from NOW


def _delay(settings: Settings, message: ExecutionMessage) -> float:
    sent = ExecutionQueue(settings).ready().send(message, visible_at=START, now=NOW)
    assert sent.visible_on is not None and sent.inserted_on is not None
    return (sent.visible_on - sent.inserted_on).total_seconds()


def test_second_precision_delivers_an_occurrence_early_to_hold_it(settings: Settings) -> None:
    assert settings.precision is Precision.SECOND  # the default
    assert _delay(settings, ExecutionMessage.scheduled("s|r|c|j", START, 1)) == 4


def test_minute_precision_delivers_it_at_its_second_never_earlier(settings: Settings) -> None:
    minute = replace(settings, precision=Precision.MINUTE)
    assert _delay(minute, ExecutionMessage.scheduled("s|r|c|j", START, 1)) == 5


def test_a_message_without_an_exact_start_is_never_early_either_way(settings: Settings) -> None:
    manual = ExecutionMessage.manual_run("s|r|c|j", now=NOW)
    assert _delay(settings, manual) == _delay(replace(settings, precision=Precision.MINUTE), manual)


@pytest.mark.parametrize("value", ["second", "Minute", " minute "])
def test_the_setting_is_read_by_name(value: str) -> None:
    env = {"SCHEDULER_EXECUTION_QUEUE": "e", "SCHEDULER_DISPATCH_QUEUE": "d"}
    settings = Settings.from_env({**env, "SCHEDULER_PRECISION": value})
    assert settings.precision == Precision(value.strip().lower())


def test_an_unknown_precision_is_refused_by_name() -> None:
    env = {"SCHEDULER_EXECUTION_QUEUE": "e", "SCHEDULER_DISPATCH_QUEUE": "d"}
    with pytest.raises(ValidationError, match="SCHEDULER_PRECISION"):
        Settings.from_env({**env, "SCHEDULER_PRECISION": "millisecond"})


def _coalescing(settings: Settings, seconds: int) -> Settings:
    return replace(settings, precision=Precision.MINUTE, coalesce_seconds=seconds)


def test_a_coalesced_occurrence_is_delivered_at_its_window_s_end_never_earlier(
    settings: Settings,
) -> None:
    """START (09:00:05.3) is in the minute ending at 09:01:00: visible then, 59.7 s from NOW,
    which the queue's whole seconds make 60. An occurrence at a window's start is on time."""
    minute = _coalescing(settings, 60)
    assert _delay(minute, ExecutionMessage.scheduled("s|r|c|j", START, 1)) == 60
    on_the_minute = datetime(2026, 3, 4, 9, 1, tzinfo=UTC)
    queue = ExecutionQueue(minute)
    message = ExecutionMessage.scheduled("s|r|c|j", on_the_minute, 1)
    assert queue.delay_seconds(message, visible_at=on_the_minute, now=NOW) == 60  # 59.7 s
    quarter = _coalescing(settings, 15)
    assert _delay(quarter, ExecutionMessage.scheduled("s|r|c|j", START, 1)) == 15  # 09:00:15


def test_a_manual_run_and_a_retry_are_not_coalesced(settings: Settings) -> None:
    minute = _coalescing(settings, 60)
    assert _delay(minute, ExecutionMessage.manual_run("s|r|c|j", now=NOW)) == 5
    retry = ExecutionMessage.scheduled("s|r|c|j", START, 1).next_attempt()
    assert _delay(minute, retry) == 5


@pytest.mark.parametrize(
    ("at", "seconds", "end"),
    [
        ("09:00:05", 60, "09:01:00"),
        ("09:01:00", 60, "09:01:00"),  # a window's start is its own end: on time
        ("09:00:59.999999", 60, "09:01:00"),
        ("09:00:16", 15, "09:00:30"),
        ("09:00:30", 15, "09:00:30"),
        ("09:00:00.5", 1, "09:00:01"),
    ],
)
def test_the_window_end_is_the_first_boundary_at_or_after_the_instant(
    at: str, seconds: int, end: str
) -> None:
    day = "2026-03-04T"
    instant = datetime.fromisoformat(day + at + "+00:00")
    assert window_end(instant, seconds) == datetime.fromisoformat(day + end + "+00:00")


def _env(**settings: str) -> dict[str, str]:
    return {"SCHEDULER_EXECUTION_QUEUE": "e", "SCHEDULER_DISPATCH_QUEUE": "d", **settings}


def test_the_coalescing_window_is_read_with_minute_precision() -> None:
    read = Settings.from_env(_env(SCHEDULER_PRECISION="minute", SCHEDULER_COALESCE_SECONDS=" 30 "))
    assert (read.precision, read.coalesce_seconds) == (Precision.MINUTE, 30)
    assert Settings.from_env(_env()).coalesce_seconds == 0  # off by default


@pytest.mark.parametrize(
    ("settings", "why"),
    [
        ({"SCHEDULER_COALESCE_SECONDS": "30"}, "needs SCHEDULER_PRECISION=minute"),
        ({"SCHEDULER_PRECISION": "minute", "SCHEDULER_COALESCE_SECONDS": "61"}, "0 to 60"),
        ({"SCHEDULER_PRECISION": "minute", "SCHEDULER_COALESCE_SECONDS": "-5"}, "0 to 60"),
        ({"SCHEDULER_PRECISION": "minute", "SCHEDULER_COALESCE_SECONDS": "half"}, "0 to 60"),
        (
            {"SCHEDULER_PRECISION": "minute", "SCHEDULER_COALESCE_SECONDS": "60",
             "SCHEDULER_GRACE_PERIOD": "PT1M"},
            "shorter than SCHEDULER_GRACE_PERIOD",
        ),
    ],
)  # fmt: skip
def test_a_coalescing_window_that_cannot_work_is_refused_by_name(
    settings: dict[str, str], why: str
) -> None:
    with pytest.raises(ValidationError, match="SCHEDULER_COALESCE_SECONDS") as refused:
        Settings.from_env(_env(**settings))
    assert why in str(refused.value)
