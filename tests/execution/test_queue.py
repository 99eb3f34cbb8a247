"""The execution queue against a real Azurite queue: delay, encoding, poison."""

import base64
from datetime import UTC, datetime, timedelta

import pytest
from azure.storage.queue import QueueClient

from scheduler_lib.config import Settings
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.store.execution_queue import ExecutionQueue

T0 = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)


def test_message_is_base64_as_the_functions_trigger_expects(
    queue: ExecutionQueue, settings: Settings
) -> None:
    message = ExecutionMessage.scheduled("s|r|c|j", T0, 1)
    queue.send(message, visible_at=T0, now=T0)
    raw = QueueClient.from_connection_string(
        settings.storage_connection_string, settings.execution_queue_name
    )
    [received] = list(raw.receive_messages())
    assert base64.b64decode(received.content).decode() == message.to_json()


def test_round_trip_and_delete(queue: ExecutionQueue) -> None:
    message = ExecutionMessage.scheduled("s|r|c|j", T0, 1)
    queue.send(message, visible_at=T0 - timedelta(seconds=5), now=T0)
    [received] = queue.receive(max_messages=5, visibility_timeout=30)
    assert ExecutionMessage.from_json(received.body) == message
    assert received.dequeue_count == 1
    queue.delete(received)
    assert queue.receive(max_messages=5) == []


def test_delay_hides_the_message_until_its_second(queue: ExecutionQueue) -> None:
    message = ExecutionMessage.scheduled("s|r|c|j", T0, 1)
    queue.send(message, visible_at=T0 + timedelta(minutes=10), now=T0)
    assert queue.receive(max_messages=5) == []
    props = queue.client.get_queue_properties()
    assert props.approximate_message_count == 1


def test_delay_beyond_seven_days_is_refused(queue: ExecutionQueue) -> None:
    message = ExecutionMessage.scheduled("s|r|c|j", T0, 1)
    with pytest.raises(ValueError, match="due index"):
        queue.send(message, visible_at=T0 + timedelta(days=7), now=T0)


def test_poison_moves_the_message(queue: ExecutionQueue) -> None:
    queue.send(ExecutionMessage.manual_run("k", now=T0), visible_at=T0, now=T0)
    [received] = queue.receive()
    queue.move_to_poison(received)
    assert queue.receive() == []
    [poisoned] = list(queue.poison.receive_messages())
    assert ExecutionMessage.from_json(bytes(poisoned.content).decode()).job_key == "k"


@pytest.mark.parametrize(
    ("message", "visible_now"),
    [
        pytest.param(ExecutionMessage.scheduled("s|r|c|j", T0, 1), True, id="occurrence-early"),
        pytest.param(
            ExecutionMessage.scheduled("s|r|c|j", T0, 1).next_attempt(),
            False,
            id="retry-never-early",
        ),
        pytest.param(
            ExecutionMessage.scheduled("s|r|c|j", T0, 1).error_action(),
            False,
            id="error-action-never-early",
        ),
    ],
)
def test_only_an_exact_start_is_delivered_ahead_of_its_time(
    queue: ExecutionQueue, message: ExecutionMessage, visible_now: bool
) -> None:
    """Due 1.5 s from now: a scheduled first attempt is visible at once (1-2 s early, so the
    executor can claim it and wait for the second); a retry or errorAction only after 2 s."""
    queue.send(message, visible_at=T0 + timedelta(seconds=1.5), now=T0)
    assert bool(queue.receive(max_messages=5)) is visible_now
    assert queue.client.get_queue_properties().approximate_message_count == 1


def test_an_exact_start_further_off_stays_hidden(queue: ExecutionQueue) -> None:
    """Due 2.5 s from now: visible after 1 s, so not yet."""
    message = ExecutionMessage.scheduled("s|r|c|j", T0, 1)
    queue.send(message, visible_at=T0 + timedelta(seconds=2.5), now=T0)
    assert queue.receive(max_messages=5) == []
