"""The StorageQueue action: put the job's message on a Storage queue with the job's SAS token.

The message goes as plain text (no base64 encode policy): consumers written for Azure
Scheduler read the text as it was configured. The SDK's own retries are off (`retry_total=0`):
retrying is the job's retryPolicy's business, and each attempt must appear in the history.
The account URL comes from `settings.storage_queue_endpoint` so tests (and sovereign clouds)
can point it elsewhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from azure.core.exceptions import AzureError, HttpResponseError
from azure.storage.queue import QueueClient

from scheduler_lib.actions import ACTION_TIMEOUT_SECONDS, ActionOutcome, ExecutionContext, require
from scheduler_lib.config import Settings

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
    sas_token = require(queue_message, "sasToken", PATH)
    text = queue_message.get("message") or ""
    where = f"queue '{queue_name}' in storage account '{account}'"
    statuses: list[int] = []
    try:
        client = QueueClient(
            account_url=settings.storage_queue_endpoint.format(account=account),
            queue_name=queue_name,
            credential=sas_token,
            retry_total=0,
            connection_timeout=timeout,
            read_timeout=timeout,
        )
        with client:
            client.send_message(
                text,
                raw_response_hook=lambda r: statuses.append(r.http_response.status_code),
            )
    except HttpResponseError as exc:
        code = getattr(exc.error_code, "value", exc.error_code)  # StorageErrorCode is an enum
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
    status = statuses[-1] if statuses else None
    return ActionOutcome(True, f"StorageQueue Action - Message sent to {where}: '{status}'", status)
