"""Queues in the test session's Azurite that Storage-queue actions send to: created, then
read by the test as a consumer would, and SAS tokens for them (one place for all three test
levels: the action, the executor and the end-to-end system)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from azure.storage.queue import QueueClient, QueueSasPermissions, generate_queue_sas

from scheduler_lib.config import AZURITE_ACCOUNT, AZURITE_KEY, Settings


def new_queue(settings: Settings, name: str) -> QueueClient:
    """A fresh queue `name` in Azurite, as a consumer (no decode policy: plain text)."""
    client = QueueClient.from_connection_string(settings.storage_connection_string, name)
    client.create_queue()
    return client


def sas_token(queue_name: str, key: str = AZURITE_KEY, **permission: bool) -> str:
    """A SAS token for `queue_name` (add permission unless others are given). Azurite checks
    the expiry against its own clock, so this uses the real time."""
    return generate_queue_sas(
        AZURITE_ACCOUNT,
        queue_name,
        key,
        permission=QueueSasPermissions(**(permission or {"add": True})),
        expiry=datetime.now(UTC) + timedelta(hours=1),
    )
