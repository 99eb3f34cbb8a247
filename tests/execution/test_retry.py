"""The retry policy (defaults, bounds, calendar intervals) and how a follow-up is delivered:
through the real Azurite queue with a delay, or parked in the due index beyond its limit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import isodate
import pytest

from scheduler_lib.domain import JobDefinition
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.errors import ValidationError
from scheduler_lib.execution.finish import Delivery, deliver
from scheduler_lib.execution.retry import RetryPolicy
from scheduler_lib.store.due_index import due_rows
from scheduler_lib.store.execution_queue import MAX_DELAY, ExecutionQueue
from scheduler_lib.store.tables import TableStore
from tests.execution.harness import T0


@pytest.mark.parametrize(
    ("action", "kind", "interval", "count"),
    [
        pytest.param({}, "Fixed", timedelta(seconds=30), 4, id="absent-means-4x30s"),
        pytest.param({"retryPolicy": None}, "Fixed", timedelta(seconds=30), 4, id="null-default"),
        pytest.param({"retryPolicy": {"retryType": "None"}}, "None", timedelta(0), 0, id="none"),
        pytest.param({"retryPolicy": {"retryType": "none"}}, "None", timedelta(0), 0, id="none-lc"),
        pytest.param(
            {"retryPolicy": {"retryType": "Fixed"}}, "Fixed", timedelta(seconds=30), 4,
            id="fixed-defaults",
        ),
        pytest.param(
            {"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT15S", "retryCount": 20}},
            "Fixed", timedelta(seconds=15), 20, id="fixed-bounds",
        ),
        pytest.param(
            {"retryPolicy": {"retryType": "Fixed", "retryInterval": "P1D", "retryCount": 2}},
            "Fixed", timedelta(days=1), 2, id="twice-a-day-from-the-docs",
        ),
    ],
)  # fmt: skip
def test_policy_from_action(
    action: dict[str, Any], kind: str, interval: timedelta, count: int
) -> None:
    policy = RetryPolicy.from_action(action)
    assert (policy.retry_type, policy.interval, policy.count) == (kind, interval, count)


@pytest.mark.parametrize(
    ("policy", "field"),
    [
        pytest.param({"retryType": "Linear"}, "retryType", id="unknown-type"),
        pytest.param({"retryType": "Fixed", "retryInterval": "PT14S"}, "retryInterval",
                     id="interval-below-15s"),
        pytest.param({"retryType": "Fixed", "retryInterval": "P19M"}, "retryInterval",
                     id="interval-above-18-months"),
        pytest.param({"retryType": "Fixed", "retryInterval": "soon"}, "retryInterval",
                     id="interval-not-iso"),
        pytest.param({"retryType": "Fixed", "retryInterval": 30}, "retryInterval",
                     id="interval-a-number"),
        pytest.param({"retryType": "Fixed", "retryCount": 21}, "retryCount", id="count-above-20"),
        pytest.param({"retryType": "Fixed", "retryCount": -1}, "retryCount", id="count-negative"),
        pytest.param({"retryType": "Fixed", "retryCount": "4"}, "retryCount", id="count-a-string"),
        pytest.param({"retryType": "Fixed", "retryCount": True}, "retryCount", id="count-a-bool"),
    ],
)  # fmt: skip
def test_unusable_policy_names_the_field(policy: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        RetryPolicy.from_action({"retryPolicy": policy})
    assert caught.value.field == f"action.retryPolicy.{field}"


def test_eighteen_months_is_the_upper_bound() -> None:
    policy = RetryPolicy.from_action({"retryPolicy": {"retryInterval": "P18M"}})
    assert isinstance(policy.interval, isodate.Duration)


@pytest.mark.parametrize(
    ("count", "attempt", "retried"),
    [
        pytest.param(4, 0, True, id="first-failure-retried"),
        pytest.param(4, 3, True, id="fourth-retry-still-allowed"),
        pytest.param(4, 4, False, id="after-fourth-retry-exhausted"),
        pytest.param(0, 0, False, id="zero-retries"),
    ],
)
def test_allows_retry(count: int, attempt: int, retried: bool) -> None:
    assert RetryPolicy("Fixed", timedelta(seconds=30), count).allows_retry(attempt) is retried
    assert RetryPolicy("None", timedelta(0), 0).allows_retry(attempt) is False


def test_a_calendar_interval_is_added_on_the_calendar() -> None:
    policy = RetryPolicy.from_action({"retryPolicy": {"retryInterval": "P1M"}})
    failed = datetime(2026, 1, 31, 12, 0, tzinfo=UTC)
    assert policy.retry_at(failed) == datetime(2026, 2, 28, 12, 0, tzinfo=UTC)


def test_deliver_within_the_queue_limit_sends_a_hidden_message(
    queue: ExecutionQueue, store: TableStore
) -> None:
    message = ExecutionMessage.scheduled("s|r|c|j", T0, 1).next_attempt()

    how = deliver(message, visible_at=T0 + timedelta(minutes=2), now=T0, queue=queue, store=store)

    assert how is Delivery.QUEUED
    assert queue.client.get_queue_properties().approximate_message_count == 1
    assert queue.receive() == []  # hidden for its two minutes
    assert list(due_rows(store, start=T0, through=T0 + timedelta(days=30))) == []


def test_deliver_beyond_the_queue_limit_parks_the_message(
    queue: ExecutionQueue, store: TableStore
) -> None:
    message = ExecutionMessage.scheduled("s|r|c|j", T0, 1).next_attempt()
    due = T0 + MAX_DELAY + timedelta(seconds=1)

    how = deliver(message, visible_at=due, now=T0, queue=queue, store=store)
    again = deliver(message, visible_at=due, now=T0, queue=queue, store=store)

    assert how is again is Delivery.PARKED
    assert queue.client.get_queue_properties().approximate_message_count == 0
    [row] = list(due_rows(store, start=T0, through=due))  # parking twice keeps one row
    assert row.due == due
    assert ExecutionMessage.from_json(row.payload) == message


MAIN = {
    "type": "Http",
    "request": {"uri": "http://x", "method": "GET"},
    "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 2},
}


@pytest.mark.parametrize(
    ("error_action", "action_name", "expected"),
    [
        pytest.param(None, "MainAction", ("Fixed", 2), id="main-uses-its-own"),
        pytest.param({"type": "Http"}, "ErrorAction", ("Fixed", 2), id="error-inherits-main"),
        pytest.param({"type": "Http", "retryPolicy": {"retryType": "None"}}, "ErrorAction",
                     ("None", 0), id="error-with-own-uses-it"),
        pytest.param({"type": "Http", "retryPolicy": {"retryType": "None"}}, "MainAction",
                     ("Fixed", 2), id="main-ignores-error-policy"),
    ],
)  # fmt: skip
def test_policy_for_attempt(
    error_action: dict[str, Any] | None, action_name: str, expected: tuple[str, int]
) -> None:
    action = {**MAIN, **({"errorAction": error_action} if error_action else {})}
    policy = RetryPolicy.for_attempt(JobDefinition({"action": action}), action_name)
    assert (policy.retry_type, policy.count) == expected


def test_an_unusable_error_action_policy_names_its_own_field() -> None:
    action = {**MAIN, "errorAction": {"retryPolicy": {"retryType": "Fixed", "retryCount": 99}}}
    with pytest.raises(ValidationError) as caught:
        RetryPolicy.for_attempt(JobDefinition({"action": action}), "ErrorAction")
    assert caught.value.field == "action.errorAction.retryPolicy.retryCount"
