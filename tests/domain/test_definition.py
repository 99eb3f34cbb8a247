"""A job definition as a type: its typed parts read from the canonical JSON, its defaults,
its schedule built once, and a corrupt stored part failing where it is read (issue 21).

Pure: the definitions are what `wire.parse_job` stores (parsed here by it), or stored JSON
as an older version or a hand edit left it."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from scheduler_lib.domain import (
    ConcurrencyPolicy,
    JobDefinition,
    JobRecord,
    JobState,
    MissedRunPolicy,
)
from scheduler_lib.domain.actions import (
    ActionType,
    HttpAction,
    RetryType,
    ServiceBusAction,
    StorageQueueAction,
)
from scheduler_lib.errors import ValidationError
from scheduler_lib.wire.jobs import parse_job
from scheduler_lib.wire.versions import LATEST_VERSION

T0 = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
HTTP = {"type": "Http", "request": {"uri": "https://example.com/x", "method": "POST"}}


def test_a_2016_job_gets_every_default() -> None:
    definition, state = parse_job({"action": HTTP})

    assert state is JobState.ENABLED
    assert definition.concurrency_policy is ConcurrencyPolicy.ALLOW
    assert definition.missed_run_policy is MissedRunPolicy.SKIP
    assert definition.catch_up_window == timedelta(days=1)
    assert definition.max_jitter == timedelta(0)
    assert (definition.pause_after, definition.pause_note) == (None, None)
    assert definition.placeholders is False  # 2016-03-01 has none
    action = definition.action
    assert isinstance(action, HttpAction) and action.type is ActionType.HTTP
    assert (action.uri, action.method, action.authentication) == ("https://example.com/x",
                                                                  "POST", None)  # fmt: skip
    assert action.retry_policy.retry_type is RetryType.FIXED
    assert (action.retry_policy.interval, action.retry_policy.count) == (timedelta(seconds=30), 4)
    assert action.timeout is None and definition.error_action is None


def test_the_2026_policies_are_typed() -> None:
    properties = {
        "startTime": "2026-03-04T10:00:00Z",
        "recurrence": {"frequency": "Hour"},
        "concurrencyPolicy": "bufferone",
        "missedRunPolicy": "RunAll",
        "catchUpWindow": "PT6H",
        "maxJitter": "PT5M",
        "pauseAfterConsecutiveFailures": 3,
        "action": {**HTTP, "timeout": "PT2M", "retryPolicy": {
            "retryType": "Exponential", "retryInterval": "PT20S", "retryCount": 5,
            "maxRetryInterval": "PT10M", "retryOn": ["5xx", 429]},
            "errorAction": {"type": "StorageQueue", "queueMessage": {
                "storageAccount": "acct", "queueName": "q", "sasToken": "?sig=x",
                "message": "m"}}},
    }  # fmt: skip
    definition, _ = parse_job(properties, LATEST_VERSION)

    assert definition.concurrency_policy is ConcurrencyPolicy.BUFFER_ONE
    assert definition.missed_run_policy is MissedRunPolicy.RUN_ALL
    assert definition.catch_up_window == timedelta(hours=6)
    assert definition.max_jitter == timedelta(minutes=5)
    assert definition.pause_after == 3 and definition.placeholders is True
    assert definition.start_time == datetime(2026, 3, 4, 10, 0, tzinfo=UTC)
    policy = definition.action.retry_policy
    assert policy.retry_type is RetryType.EXPONENTIAL
    assert (policy.interval, policy.count, policy.max_interval) == (
        timedelta(seconds=20), 5, timedelta(minutes=10))  # fmt: skip
    assert policy.retry_on == frozenset({"5xx", "429"})
    assert definition.action.timeout == timedelta(minutes=2)
    error = definition.error_action
    assert isinstance(error, StorageQueueAction) and error.queue_name == "q"


def test_service_bus_actions_name_their_entity() -> None:
    sas = {"type": "SharedAccessKey", "sasKeyName": "k", "sasKey": "v"}
    topic = {"type": "ServiceBusTopic", "serviceBusTopicMessage": {
        "topicPath": "events", "namespace": "contoso", "transportType": "AMQP", "message": "m",
        "authentication": sas}}  # fmt: skip
    action = parse_job({"action": topic})[0].action
    assert isinstance(action, ServiceBusAction)
    assert (action.type, action.namespace, action.entity) == (
        ActionType.SERVICE_BUS_TOPIC, "contoso", "events")  # fmt: skip


def test_a_corrupt_stored_part_fails_where_it_is_read_naming_its_field() -> None:
    stored = JobDefinition({"action": {**HTTP, "retryPolicy": {"retryCount": 99}}})

    assert stored.concurrency_policy is ConcurrencyPolicy.ALLOW  # the rest reads fine
    with pytest.raises(ValidationError) as caught:
        _ = stored.action
    assert caught.value.field == "action.retryPolicy.retryCount"
    with pytest.raises(ValidationError) as missing:
        _ = JobDefinition({"startTime": "2026-03-04T09:00:00Z"}).action
    assert missing.value.field == "action"


def test_the_schedule_is_built_once_and_shared_by_replaced_records() -> None:
    definition, _ = parse_job({"recurrence": {"frequency": "Minute"}, "action": HTTP})
    record = JobRecord("s", "rg", "c", "j", definition, T0)

    schedule = record.schedule
    assert replace(record, next_execution_time=T0).schedule is schedule
    assert schedule.first() == T0
    # Another creation instant (a job recreated) is another schedule.
    assert replace(record, created_time=T0 + timedelta(hours=1)).schedule is not schedule


def test_a_pause_note_is_added_unless_the_user_wrote_one() -> None:
    plain = JobDefinition({"action": HTTP})
    assert plain.with_pause_note("paused").pause_note == "paused"
    assert plain.document == {"action": HTTP}  # the value is never changed
    own = JobDefinition({"action": HTTP, "pauseNote": "team X"})
    assert own.with_pause_note("paused") is own
