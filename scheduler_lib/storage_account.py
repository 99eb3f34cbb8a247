"""How every storage adapter reaches the scheduler's storage account: one factory for the
table and the queue service clients.

A connection string (Azurite, or an account key) when `Settings` has one; otherwise the
account's endpoint and the app's managed identity (`DefaultAzureCredential`, with the
user-assigned identity's client id when one is configured). The adapters pass their SDK's
client class and options, so this module imports no storage SDK itself.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar, cast

from scheduler_lib.config import Settings

C = TypeVar("C")


def service_client(
    client_class: type[C], settings: Settings, endpoint: str, **options: Any
) -> C:
    """A `client_class` for the storage account, by connection string or by identity
    (`endpoint`: the service's endpoint, used only with the identity)."""
    factory = cast(Any, client_class)  # both SDKs' clients: from_connection_string, (url, ...)
    if settings.storage_connection_string:
        connection = settings.storage_connection_string
        return cast(C, factory.from_connection_string(connection, **options))
    from azure.identity import DefaultAzureCredential

    credential = DefaultAzureCredential(managed_identity_client_id=settings.storage_client_id)
    return cast(C, factory(endpoint, credential=credential, **options))


class Once:
    """A setup step each storage adapter runs once per instance (creating its tables or
    queues): the first caller runs it, racing callers wait for it, later ones skip it. A
    step that raises is tried again by the next caller."""

    def __init__(self) -> None:
        self._done = False
        self._lock = threading.Lock()

    def run(self, step: Callable[[], object]) -> None:
        if self._done:
            return
        with self._lock:
            if not self._done:
                step()
                self._done = True
