"""One way to reach the storage account, for tables and queues alike: by connection string
(Azurite here) or by the app's identity. Built clients only: the identity branch is checked up
to the client (its endpoint and credential), since no managed identity exists here."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest
from azure.core.pipeline import PipelineResponse
from azure.data.tables import TableServiceClient
from azure.identity import DefaultAzureCredential
from azure.storage.queue import QueueServiceClient
from requests.adapters import HTTPAdapter

from scheduler_lib.config import Settings
from scheduler_lib.execution.queue import ExecutionQueue
from scheduler_lib.storage_account import connection_pool_size, service_client
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


def _adapter_of(client: TableServiceClient | QueueServiceClient) -> HTTPAdapter:
    """The `requests` adapter that carried one real request of `client` to Azurite."""
    adapters: list[HTTPAdapter] = []

    def hook(response: PipelineResponse) -> None:
        adapters.append(response.http_response.internal_response.connection)

    client.get_service_properties(raw_response_hook=hook)
    [adapter] = adapters
    return adapter


def test_each_client_pools_a_connection_per_thread_that_may_use_it(settings: Settings) -> None:
    """The SDKs' own session keeps 10 connections; the local host runs its executor's
    `executor_concurrency` messages, each dispatch worker's threads and the API's at once, so
    every request past the tenth threw its connection away and the next one opened a new one
    ("Connection pool is full, discarding connection")."""
    sized = replace(settings, executor_concurrency=50, dispatch_workers=3)
    size = connection_pool_size(sized)
    assert size == 50 + 3 * 8 + 42 > 10
    for client in (TableStore(sized).service, ExecutionQueue(sized)._service):
        assert _adapter_of(client).poolmanager.connection_pool_kw["maxsize"] == size
        assert connection_pool_size(replace(sized, executor_concurrency=60)) == size + 10


def test_as_many_requests_at_once_as_the_pool_holds_keep_their_connections(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """Threads up to the pool's size, each with a request in flight at once (a barrier),
    keep every connection for reuse: urllib3 discards none."""
    sized = replace(settings, executor_concurrency=24, dispatch_workers=1)
    client = ExecutionQueue(sized)._service
    threads = 24
    together = threading.Barrier(threads)

    def request(_: int) -> None:
        together.wait(timeout=30)
        client.get_service_properties()

    quiet = caplog.at_level(logging.WARNING, logger="urllib3.connectionpool")
    with quiet, ThreadPoolExecutor(threads) as pool:
        list(pool.map(request, range(threads)))
    assert not [r for r in caplog.records if "pool is full" in r.getMessage()]
