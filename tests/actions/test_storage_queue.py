"""StorageQueue actions against the session's real Azurite, with real SAS tokens."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from azure.storage.queue import QueueClient

from devtools.azurite import free_port
from scheduler_lib.actions import ExecutionContext, run_action
from scheduler_lib.config import AZURITE_ACCOUNT, Settings
from tests.support.azurite_queues import new_queue, sas_token

CONTEXT = ExecutionContext("job", "collection", datetime(2024, 3, 1, tzinfo=UTC), "tag")


@pytest.fixture
def queue(settings: Settings) -> QueueClient:
    """A fresh queue in Azurite that a consumer reads from (no decode policy: plain text)."""
    return new_queue(settings, f"{settings.storage_prefix}-{uuid.uuid4().hex[:8]}")


def queue_action(queue_name: str, token: str, message: str) -> dict[str, Any]:
    return {
        "type": "StorageQueue",
        "queueMessage": {
            "storageAccount": AZURITE_ACCOUNT,
            "queueName": queue_name,
            "sasToken": token,
            "message": message,
        },
    }


@pytest.mark.parametrize(
    "message",
    [
        pytest.param("hello from the scheduler", id="text"),
        pytest.param('{"job": "nightly", "n": 1}', id="json"),
        pytest.param("ünïcødé <xml> & more", id="unicode-and-markup"),
    ],
)
@pytest.mark.parametrize("leading_question_mark", [False, True], ids=["sas", "?sas"])
def test_message_arrives_as_plain_text(
    settings: Settings, queue: QueueClient, message: str, leading_question_mark: bool
) -> None:
    token = sas_token(queue.queue_name)
    token = "?" + token if leading_question_mark else token
    outcome = run_action(queue_action(queue.queue_name, token, message), CONTEXT, settings)
    assert outcome.succeeded, outcome.message
    assert outcome.status_code == 201
    assert outcome.message == (
        f"StorageQueue Action - Message sent to queue '{queue.queue_name}' "
        f"in storage account '{AZURITE_ACCOUNT}': '201'"
    )
    assert [m.content for m in queue.receive_messages()] == [message]


def test_sas_signed_with_the_wrong_key_fails_without_leaking_it(
    settings: Settings, queue: QueueClient
) -> None:
    token = sas_token(queue.queue_name, key="d3Jvbmcta2V5LXdyb25nLWtleS13cm9uZy1rZXk=")
    outcome = run_action(queue_action(queue.queue_name, token, "m"), CONTEXT, settings)
    assert not outcome.succeeded
    assert outcome.status_code == 403
    assert "AuthenticationFailed" in outcome.message
    signature = dict(p.split("=", 1) for p in token.split("&"))["sig"]
    assert signature not in outcome.message
    assert queue.peek_messages() == []


def test_sas_without_add_permission_fails(settings: Settings, queue: QueueClient) -> None:
    token = sas_token(queue.queue_name, read=True)
    outcome = run_action(queue_action(queue.queue_name, token, "m"), CONTEXT, settings)
    assert not outcome.succeeded
    assert outcome.status_code == 403


def test_missing_queue_fails_with_404(settings: Settings) -> None:
    name = f"{settings.storage_prefix}-missing"
    outcome = run_action(queue_action(name, sas_token(name), "m"), CONTEXT, settings)
    assert not outcome.succeeded
    assert outcome.status_code == 404
    assert "QueueNotFound" in outcome.message


def test_unreachable_storage_is_a_failed_outcome_without_the_token(settings: Settings) -> None:
    """No SDK retries (the job's retryPolicy retries), and the SAS is not in the message even
    though the SDK's connection error quotes the request URL."""
    unreachable = replace(
        settings, storage_queue_endpoint=f"http://127.0.0.1:{free_port()}/{{account}}"
    )
    token = sas_token("q")
    outcome = run_action(queue_action("q", token, "m"), CONTEXT, unreachable, timeout=2)
    assert not outcome.succeeded
    assert outcome.status_code is None
    assert "ServiceRequestError" in outcome.message
    signature = dict(p.split("=", 1) for p in token.split("&"))["sig"]
    assert signature not in outcome.message


def identity_action(queue_name: str, account: str = AZURITE_ACCOUNT) -> dict[str, Any]:
    return {
        "type": "StorageQueue",
        "queueMessage": {
            "storageAccount": account,
            "queueName": queue_name,
            "message": "no secret in the job",
        },
    }


def test_without_sas_token_the_own_account_is_reached_with_the_apps_credential(
    settings: Settings, queue: QueueClient
) -> None:
    """Locally the app's own account is Azurite's and its credential the connection string
    (in Azure: the managed identity, see docs/deploy.md)."""
    outcome = run_action(identity_action(queue.queue_name), CONTEXT, settings)
    assert outcome.succeeded, outcome.message
    assert [m.content for m in queue.receive_messages()] == ["no secret in the job"]


def test_without_sas_token_other_accounts_are_refused(
    settings: Settings, queue: QueueClient
) -> None:
    """Re-checked when the action runs: an account no longer allowed is refused."""
    not_allowed = replace(settings, identity_storage_accounts=("contosoqueues",))
    for current, account in ((settings, "someoneelse"), (not_allowed, AZURITE_ACCOUNT)):
        outcome = run_action(identity_action(queue.queue_name, account), CONTEXT, current)
        assert not outcome.succeeded
        assert "action.queueMessage.sasToken: is required" in outcome.message
        assert "SCHEDULER_IDENTITY_STORAGE_ACCOUNTS" in outcome.message
    assert queue.peek_messages() == []


def test_the_queue_endpoint_goes_through_the_egress_policy(
    settings: Settings, queue: QueueClient
) -> None:
    """Azurite listens on loopback, which the local host allows; a deployment that allows
    nothing private does not reach it."""
    closed = replace(settings, egress_allow=())
    token = sas_token(queue.queue_name)
    outcome = run_action(queue_action(queue.queue_name, token, "m"), CONTEXT, closed)
    assert not outcome.succeeded
    assert "refused by the egress policy" in outcome.message
    assert "127.0.0.1 is not publicly routable" in outcome.message
    assert queue.peek_messages() == []


def test_a_stored_account_that_is_not_a_name_is_refused_at_run_time(settings: Settings) -> None:
    """A job stored before account names were validated never turns into a host."""
    action = queue_action("q", "?sig=x", "m")
    action["queueMessage"]["storageAccount"] = "127.0.0.1:10001/devstoreaccount1?"
    outcome = run_action(action, CONTEXT, settings)
    assert not outcome.succeeded
    assert "action.queueMessage.storageAccount: must be a storage account name" in outcome.message
