"""The StorageQueue action: put the job's message on a Storage queue with the job's SAS token,
or, without one, with the app's own identity.

Identity-based sends reach only the accounts `destinations` allows (by default the app's own
account; checked at PUT and again here). For the app's own account with a connection string
(Azurite locally) the connection string's key is the credential; otherwise the managed
identity (`identity.app_credential`), which the Bicep template grants Storage Queue Data
Contributor (it includes sending messages) on the app's account.
Requests go through the egress policy's pinned session (`pinned`), like HTTP actions.

The message goes as plain text (no base64 encode policy): consumers written for Azure
Scheduler read the text as it was configured. The SDK's own retries are off (`retry_total=0`):
retrying is the job's retryPolicy's business, and each attempt must appear in the history.
The account URL comes from `settings.storage_queue_endpoint` so tests (and sovereign clouds)
can point it elsewhere.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any
from xml.sax.saxutils import escape

from azure.core.exceptions import AzureError, HttpResponseError
from azure.core.pipeline.transport import RequestsTransport
from azure.storage.queue import QueueClient

from scheduler_lib.actions import ACTION_TIMEOUT_SECONDS, ActionOutcome, ExecutionContext, require
from scheduler_lib.actions.destinations import check_action
from scheduler_lib.actions.egress import EgressDenied, policy_for
from scheduler_lib.actions.identity import app_credential
from scheduler_lib.actions.pinned import pinned_session
from scheduler_lib.config import Settings
from scheduler_lib.domain.actions import ENVELOPE

PATH = "action.queueMessage"


def execute(
    action: Mapping[str, Any],
    context: ExecutionContext,
    settings: Settings,
    *,
    timeout: float = ACTION_TIMEOUT_SECONDS,
) -> ActionOutcome:
    """Send the action's queue message once."""
    queue_message = require(action, "queueMessage", "action")
    account = require(queue_message, "storageAccount", PATH)
    queue_name = require(queue_message, "queueName", PATH)
    sas_token = queue_message.get("sasToken") or None
    check_action(action, settings)
    text = queue_message.get("message") or ""
    if queue_message.get(ENVELOPE):  # api-version 2026-12-01
        text = envelope(text, context)
    where = f"queue '{queue_name}' in storage account '{account}'"
    statuses: list[int] = []
    session = pinned_session(policy_for(settings))
    try:
        client = _client(
            settings,
            account.lower(),
            queue_name,
            sas_token,
            transport=RequestsTransport(session=session, session_owner=False),
            retry_total=0,
            connection_timeout=timeout,
            read_timeout=timeout,
        )
        with client:
            client.send_message(
                text,
                raw_response_hook=lambda r: statuses.append(r.http_response.status_code),
            )
    except EgressDenied as exc:
        return ActionOutcome(
            False,
            f"StorageQueue Action - Sending to {where} refused by the egress policy: {exc.message}",
        )
    except HttpResponseError as exc:
        error_code = getattr(exc, "error_code", None)  # set by the storage SDK, not typed
        code = getattr(error_code, "value", error_code)  # StorageErrorCode is an enum
        reason = code or exc.reason or type(exc).__name__
        detail = exc.message.splitlines()[0] if exc.message else ""
        return ActionOutcome(
            False,
            f"StorageQueue Action - Sending to {where} failed: '{exc.status_code}' {reason}"
            + (f": {detail}" if detail and detail != reason else ""),
            exc.status_code,
        )
    except (AzureError, ValueError) as exc:  # unreachable account, malformed account URL
        return ActionOutcome(
            False, f"StorageQueue Action - Sending to {where} failed: {type(exc).__name__}: {exc}"
        )
    finally:
        session.close()
    status = statuses[-1] if statuses else None
    return ActionOutcome(True, f"StorageQueue Action - Message sent to {where}: '{status}'", status)


def envelope(message: str, context: ExecutionContext) -> str:
    """`message` inside Azure Scheduler's `StorageQueueMessage` XML envelope, which tells a
    queue consumer what the `x-ms-*` headers tell an HTTP target (the region Azure also
    sent is left out: this scheduler has none). The declaration says utf-16 as Azure's,
    written by .NET's XmlSerializer, did; the queue holds the text."""
    fields = (
        ("ExecutionTag", context.execution_tag),
        ("ClientRequestId", str(uuid.uuid4())),
        ("ExpectedExecutionTime", context.expected_execution_time_iso),
        ("SchedulerJobId", context.job_id),
        ("SchedulerJobCollectionId", context.job_collection_id),
        ("Message", message),
    )
    inner = "".join(f"<{name}>{escape(value)}</{name}>" for name, value in fields)
    return (
        '<?xml version="1.0" encoding="utf-16"?>'
        '<StorageQueueMessage xmlns:xsd="http://www.w3.org/2001/XMLSchema" '
        f'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">{inner}</StorageQueueMessage>'
    )


def _client(
    settings: Settings, account: str, queue_name: str, sas_token: str | None, **kwargs: Any
) -> QueueClient:
    if (
        sas_token is None
        and account == settings.own_storage_account
        and (settings.storage_connection_string)
    ):
        return QueueClient.from_connection_string(
            settings.storage_connection_string, queue_name, **kwargs
        )
    credential = sas_token or app_credential(settings.storage_client_id)
    return QueueClient(
        account_url=settings.storage_queue_endpoint.format(account=account),
        queue_name=queue_name,
        credential=credential,
        **kwargs,
    )
