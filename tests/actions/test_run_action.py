"""`run_action` dispatch: types, adapters, and failures that become outcomes."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from scheduler_lib.actions import ActionOutcome, ExecutionContext, run_action
from scheduler_lib.config import Settings
from tests.support.http_target import HttpTarget

CONTEXT = ExecutionContext("job", "collection", datetime(2024, 3, 1, tzinfo=UTC), "tag")


def test_unknown_action_type_is_a_failed_outcome() -> None:
    outcome = run_action({"type": "Ftp"}, CONTEXT, Settings())
    assert outcome == ActionOutcome(False, "action.type: unsupported action type 'Ftp'")


def test_unknown_adapter_is_a_programming_error() -> None:
    with pytest.raises(TypeError, match="timout"):
        run_action({"type": "Http"}, CONTEXT, Settings(), timout=1)


@pytest.mark.parametrize(
    ("action", "field"),
    [
        pytest.param({"type": "Http"}, "action.request", id="http-without-request"),
        pytest.param(
            {"type": "Http", "request": {"method": "GET"}},
            "action.request.uri",
            id="http-without-uri",
        ),
        pytest.param(
            {"type": "StorageQueue", "queueMessage": {"storageAccount": "acct", "queueName": "q"}},
            "action.queueMessage.sasToken",
            id="queue-without-sas",
        ),
        pytest.param(
            {"type": "ServiceBusTopic", "serviceBusTopicMessage": {"namespace": "n"}},
            "action.serviceBusTopicMessage.topicPath",
            id="topic-without-path",
        ),
    ],
)
def test_incomplete_stored_action_fails_naming_the_field(action: dict, field: str) -> None:
    outcome = run_action(action, CONTEXT, Settings())
    assert not outcome.succeeded
    assert outcome.message.startswith(f"{action['type']} Action - {field}: is required")


def test_adapters_go_only_to_executors_that_take_them() -> None:
    """`sender_factory` means nothing to HTTP; `verify` nothing to Service Bus."""
    with HttpTarget() as target:
        action = {"type": "Http", "request": {"uri": target.url, "method": "GET"}}
        outcome = run_action(action, CONTEXT, Settings(), sender_factory=object(), timeout=5)
    assert outcome.succeeded
