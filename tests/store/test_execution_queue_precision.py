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
from scheduler_lib.precision import Precision
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
