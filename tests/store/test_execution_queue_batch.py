"""`ExecutionQueue.send_batch`: occurrences sent as one queue message (`batch_json`), visible
when the first of them would be alone (the same early-delivery rule as `send`, not a copy
of it). Real Azurite queue: the body and the delay are those the queue service stored."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from scheduler_lib.config import Settings
from scheduler_lib.domain.messages import BATCH_LIMIT, ExecutionMessage, parse_body
from scheduler_lib.precision import Precision
from scheduler_lib.store.execution_queue import ExecutionQueue

NOW = datetime(2026, 3, 4, 9, 0, 0, 300_000, tzinfo=UTC)
START = NOW + timedelta(seconds=5)


def _members(n: int, start: datetime = START) -> list[tuple[ExecutionMessage, datetime]]:
    return [(ExecutionMessage.scheduled(f"s|r|c|j{i}", start, 1), start) for i in range(n)]


@pytest.mark.parametrize(("precision", "delay"), [(Precision.SECOND, 4), (Precision.MINUTE, 5)])
def test_a_batch_is_one_queue_message_visible_as_its_members_would_be_alone(
    settings: Settings, precision: Precision, delay: int
) -> None:
    queue = ExecutionQueue(replace(settings, precision=precision)).ready()
    members = _members(3)

    sent = queue.send_batch(members, now=NOW)

    assert sent.visible_on is not None and sent.inserted_on is not None
    assert (sent.visible_on - sent.inserted_on).total_seconds() == delay
    assert queue.delay_seconds(members[0][0], visible_at=START, now=NOW) == delay
    assert queue.receive(max_messages=5, visibility_timeout=30) == []  # not visible yet
    assert queue.depth() == 1  # one message for the three


def test_its_body_carries_the_members_in_order(settings: Settings) -> None:
    queue = ExecutionQueue(settings).ready()
    members = _members(BATCH_LIMIT, start=NOW)  # already due: visible at once

    queue.send_batch(members, now=NOW)

    [received] = queue.receive(max_messages=5, visibility_timeout=30)
    assert parse_body(received.body) == [m for m, _ in members]


def test_members_of_different_seconds_become_visible_with_the_first(settings: Settings) -> None:
    queue = ExecutionQueue(settings).ready()
    members = _members(1) + _members(1, start=START + timedelta(seconds=3))

    sent = queue.send_batch(members, now=NOW)

    assert sent.visible_on is not None and sent.inserted_on is not None
    assert (sent.visible_on - sent.inserted_on).total_seconds() == 4


def test_more_than_the_limit_is_refused(settings: Settings) -> None:
    with pytest.raises(ValueError, match="1 to 64"):
        ExecutionQueue(settings).ready().send_batch(_members(BATCH_LIMIT + 1), now=NOW)
