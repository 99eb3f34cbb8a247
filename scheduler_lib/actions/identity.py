"""The app's own identity for actions that send without a secret of their own (a Storage
queue message without `sasToken`, a Service Bus message without SharedAccessKey): in Azure
the managed identity (`AzureWebJobsStorage__clientId` names a user-assigned one), locally
whatever `DefaultAzureCredential` finds. Which accounts and namespaces may be reached this
way is `destinations`' business."""

from __future__ import annotations

import functools

from azure.identity import DefaultAzureCredential


@functools.lru_cache(maxsize=4)
def app_credential(client_id: str | None) -> DefaultAzureCredential:
    """One credential per identity for the process, so its token cache survives executions."""
    return DefaultAzureCredential(managed_identity_client_id=client_id)
