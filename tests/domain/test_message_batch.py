"""A batch of execution messages in one queue message (`domain/messages.py`): the codec the
dispatcher writes and the executor reads, and the ids its members claim under."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from scheduler_lib.domain.messages import (
    BATCH_LIMIT,
    ExecutionMessage,
    batch_json,
    member_id,
    parse_body,
)
from scheduler_lib.errors import ValidationError

WHEN = datetime(2026, 11, 26, 10, 0, tzinfo=UTC)


def _messages(n: int) -> list[ExecutionMessage]:
    return [ExecutionMessage.scheduled(f"sub/rg/coll/job-{i}", WHEN, 1, "inc") for i in range(n)]


def test_a_batch_reads_back_as_its_members_in_order() -> None:
    messages = _messages(3)
    messages[1] = messages[1].next_attempt()
    assert parse_body(batch_json(messages)) == messages


def test_a_lone_message_reads_as_one() -> None:
    message = _messages(1)[0]
    assert parse_body(message.to_json()) == [message]


def test_a_full_batch_stays_well_inside_a_queue_message() -> None:
    """64 KiB raw; the Functions host's base64 makes it 4/3 larger."""
    body = batch_json(_messages(BATCH_LIMIT))
    assert len(body.encode()) * 4 / 3 < 48 * 1024


@pytest.mark.parametrize(
    "body",
    [
        '{"v":1,"batch":[]}',
        '{"v":2,"batch":[{}]}',
        '{"v":1,"batch":{}}',
        '{"v":1,"batch":[{"job_key":"x"}]}',
        "[1]",
        "not json",
    ],
)
def test_a_malformed_body_is_a_validation_error(body: str) -> None:
    with pytest.raises(ValidationError):
        parse_body(body)


def test_a_batch_over_the_limit_is_refused_both_ways() -> None:
    with pytest.raises(ValueError):
        batch_json(_messages(BATCH_LIMIT + 1))
    with pytest.raises(ValueError):
        batch_json([])
    members = ",".join(m.to_json() for m in _messages(BATCH_LIMIT + 1))
    with pytest.raises(ValidationError, match="more than"):
        parse_body(f'{{"v":1,"batch":[{members}]}}')


def test_members_claim_under_distinct_stable_ids() -> None:
    assert member_id("abc", 0, 1) == "abc"
    ids = {member_id("abc", i, 3) for i in range(3)}
    assert len(ids) == 3 and "abc" not in ids
    assert member_id("abc", 2, 3) == member_id("abc", 2, 3)
