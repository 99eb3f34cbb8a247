"""Execution messages survive the queue and identify their occurrence."""

from datetime import UTC, datetime, timedelta, timezone

import pytest

from scheduler_lib.domain.messages import ERROR_ACTION, ExecutionMessage
from scheduler_lib.errors import ValidationError

T0 = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)


def test_round_trip() -> None:
    message = ExecutionMessage.scheduled("s|r|c|j", T0, 7).next_attempt().error_action()
    assert ExecutionMessage.from_json(message.to_json()) == message
    assert message.action == ERROR_ACTION and message.attempt == 0


def test_scheduled_tag_is_stable_per_occurrence_and_differs_between_them() -> None:
    plus_one = timezone(timedelta(hours=1))
    a = ExecutionMessage.scheduled("s|r|c|j", T0, 1)
    assert (
        a.execution_tag
        == ExecutionMessage.scheduled("s|r|c|j", T0.astimezone(plus_one), 1).execution_tag
    )
    assert (
        a.execution_tag
        != ExecutionMessage.scheduled("s|r|c|j", T0 + timedelta(minutes=1), 2).execution_tag
    )
    assert a.execution_tag == a.next_attempt().execution_tag


def test_manual_runs_get_fresh_tags() -> None:
    a = ExecutionMessage.manual_run("k", now=T0)
    b = ExecutionMessage.manual_run("k", now=T0)
    assert a.manual and a.execution_tag != b.execution_tag


@pytest.mark.parametrize(
    "text",
    ["not json", "{}", '{"v": 2}', '{"v":1,"job_key":"k","occurrence":"x","execution_tag":"t"}'],
    ids=["not-json", "empty", "future-version", "bad-time"],
)
def test_malformed_messages_are_validation_errors(text: str) -> None:
    with pytest.raises(ValidationError):
        ExecutionMessage.from_json(text)


def test_late_and_buffered_runs_round_trip_and_plain_messages_keep_their_form() -> None:
    scheduled = ExecutionMessage.scheduled("s|r|c|j", T0, 7)
    assert "buffered" not in scheduled.to_json() and "catch_up" not in scheduled.to_json()
    late = scheduled.late_run("Backfill")
    assert (late.manual, late.occurrence_number, late.catch_up) == (True, 0, "Backfill")
    assert late.execution_tag == scheduled.execution_tag  # the occurrence's own tag
    assert late.start_at is None  # never held for its second nor judged late
    buffered = ExecutionMessage.from_json(scheduled.to_json().replace('"v"', '"buffered":true,"v"'))
    assert buffered.buffered and buffered.start_at is None
    for message in (late, buffered):
        assert ExecutionMessage.from_json(message.to_json()) == message


def test_every_field_round_trips_and_a_plain_message_keeps_its_wire_form() -> None:
    """The wire form is what queued messages from an earlier release carry: a plain
    scheduled message's exact text is pinned, and a message with every optional field set
    comes back whole."""
    plain = ExecutionMessage("s|r|c|j", T0, "tag", 7, incarnation="i1")
    assert plain.to_json() == (
        '{"job_key":"s|r|c|j","occurrence":"2026-03-04T09:00:00+00:00","execution_tag":"tag",'
        '"occurrence_number":7,"action":"MainAction","attempt":0,"manual":false,'
        '"incarnation":"i1","v":1}'
    )
    full = ExecutionMessage(
        "s|r|c|j", T0, "tag", 0, ERROR_ACTION, 2, True, "i1", jitter_seconds=5, buffered=True,
        catch_up="CatchUp", watchdog=True, lease_seen="2026-03-04T09:00:30+00:00",
        before_claim=True,
    )  # fmt: skip
    assert ExecutionMessage.from_json(full.to_json()) == full
