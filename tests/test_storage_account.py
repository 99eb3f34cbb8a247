"""One way to reach the storage account, for tables and queues alike: by connection string
(Azurite here) or by the app's identity. Built clients only: the identity branch is checked up
to the client (its endpoint and credential), since no managed identity exists here."""

from __future__ import annotations

from azure.data.tables import TableServiceClient
from azure.identity import DefaultAzureCredential
from azure.storage.queue import QueueServiceClient

from scheduler_lib.config import Settings
from scheduler_lib.execution.queue import ExecutionQueue
from scheduler_lib.storage_account import service_client
from scheduler_lib.store.tables import TableStore

IDENTITY = Settings(
    storage_connection_string=None, storage_account_name="acct", storage_client_id="cid"
)


def test_tables_and_queues_reach_the_account_by_identity() -> None:
    tables = TableStore(IDENTITY).service
    queues = ExecutionQueue(IDENTITY)._service
    assert tables.url.startswith("https://acct.table.core.windows.net")
    assert queues.url.startswith("https://acct.queue.core.windows.net")
    for client in (tables, queues):
        assert isinstance(client.credential, DefaultAzureCredential)


def test_a_connection_string_wins_over_the_identity(settings: Settings) -> None:
    both = Settings(
        storage_connection_string=settings.storage_connection_string,
        storage_account_name="acct",
    )
    for kind in (TableServiceClient, QueueServiceClient):
        client = service_client(kind, both, "https://unused.example")
        assert client.account_name == "devstoreaccount1"
        assert not isinstance(client.credential, DefaultAzureCredential)
