"""One way to reach the storage account, for tables and queues alike: by connection string
(Azurite here) or by the app's identity. Built clients only: the identity branch is checked up
to the client (its endpoint and credential), since no managed identity exists here."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import requests
from azure.core.exceptions import HttpResponseError
from azure.core.pipeline import PipelineResponse
from azure.data.tables import TableServiceClient
from azure.identity import DefaultAzureCredential
from azure.storage.queue import QueueServiceClient

from scheduler_lib import storage_calls
from scheduler_lib.concurrent_calls import MEMBER_THREADS
from scheduler_lib.config import TABLES, Settings
from scheduler_lib.storage_account import (
    connection_pool_size,
    service_client,
    storage_connections,
)
from scheduler_lib.storage_patience import INTERACTIVE
from scheduler_lib.storage_transport import ConnectionPools
from scheduler_lib.store.execution_queue import ExecutionQueue
from scheduler_lib.store.tables import TableStore, _client_options
from scheduler_lib.transport_choice import TransportChoice

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


def _pools_of(client: TableServiceClient | QueueServiceClient) -> ConnectionPools:
    """The connections that carried one real request of `client` to Azurite."""
    pools: list[ConnectionPools] = []

    def hook(response: PipelineResponse) -> None:
        pools.append(response.context.transport.pools)

    client.get_service_properties(raw_response_hook=hook)
    [found] = pools
    return found


def test_each_client_pools_a_connection_per_thread_that_may_use_it(settings: Settings) -> None:
    """The SDKs' own session keeps 10 connections; the local host runs its executor's
    `executor_concurrency` messages, each dispatch worker's threads and the API's at once, so
    every request past the tenth threw its connection away and the next one opened a new one
    ("Connection pool is full, discarding connection")."""
    sized = replace(settings, executor_concurrency=50, dispatch_workers=3)
    size = connection_pool_size(sized)
    assert size == 50 + MEMBER_THREADS + 3 * 8 + 42 > 10
    for client in (TableStore(sized).service, ExecutionQueue(sized)._service):
        assert _pools_of(client).maxsize == size
        assert connection_pool_size(replace(sized, executor_concurrency=60)) == size + 10


def test_as_many_requests_at_once_as_the_pool_holds_keep_their_connections(
    settings: Settings,
) -> None:
    """Threads up to the pool's size, each with a request in flight at once (a barrier),
    keep every connection they opened for reuse (fails with a pool of the SDKs' 10 when
    more than 10 were in flight at once: 19-24 here)."""
    sized = replace(settings, executor_concurrency=24, dispatch_workers=1)
    client = ExecutionQueue(sized)._service
    pools = _pools_of(client)
    threads = 24
    together = threading.Barrier(threads)

    def request(_: int) -> None:
        together.wait(timeout=30)
        client.get_service_properties()

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(request, range(threads)))
    assert 1 < pools.opened <= threads + 1
    assert pools.idle() == pools.opened


# The environment a storage client honours is read once, when it is made (bench/cost.py
# measured `requests` re-reading it on every request at 13 % of the host's CPU).

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


class _Proxy:
    """A real local HTTP proxy that records the absolute URLs sent to it and answers 502."""

    def __init__(self) -> None:
        seen = self.seen = []  # type: list[str]

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append(self.path)
                self.send_response(502)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Proxy]:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    server = _Proxy()
    yield server
    server.stop()


def _quick(settings: Settings) -> TableServiceClient:
    return service_client(TableServiceClient, settings, "", **_client_options(INTERACTIVE))


def test_a_proxy_in_the_environment_carries_storage_requests(
    settings: Settings, proxy: _Proxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    client = _quick(settings)
    with pytest.raises(HttpResponseError):
        list(client.list_tables())
    assert proxy.seen and all(url.startswith(client.url) for url in proxy.seen)


def test_no_proxy_in_the_environment_bypasses_it(
    settings: Settings, proxy: _Proxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    list(_quick(settings).list_tables())
    assert proxy.seen == []


def test_the_environment_is_read_when_the_client_is_made_not_per_request(
    settings: Settings, proxy: _Proxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fails with `requests`' default `trust_env`, which looks the variables up per request."""
    client = _quick(settings)
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    list(client.list_tables())
    assert proxy.seen == []


def test_a_storage_request_skips_requests_session_merging(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fails with a plain `requests.Session`, whose `request` prepares every request through
    `prepare_request` (merging the session's headers, cookies, auth and hooks into it) and
    `merge_environment_settings`: half of the host's CPU per storage request (docs/cost.md).
    The request itself still goes out and is answered (tables listed, an entity read)."""
    merged: list[str] = []
    for name in ("prepare_request", "merge_environment_settings"):
        original = getattr(requests.Session, name)

        def spy(self: requests.Session, *args: object, _o=original, _n=name, **kw: object):  # type: ignore[no-untyped-def]
            merged.append(_n)
            return _o(self, *args, **kw)

        monkeypatch.setattr(requests.Session, name, spy)
    store = TableStore(settings)
    store.ensure_tables()
    table = store.table("JobHistory")
    table.upsert_entity({"PartitionKey": "p", "RowKey": "r", "N": 1})
    assert table.get_entity("p", "r")["N"] == 1
    assert merged == []


def test_a_ca_bundle_in_the_environment_verifies_tls(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The bundle is the one TLS is verified with: a missing file fails every https
    request before it connects (requests' own check), where certifi's bundle would not."""
    missing = tmp_path / "no-such-bundle.pem"
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(missing))
    assert settings.storage_connection_string
    https = settings.storage_connection_string.replace("http://", "https://")
    client = _quick(replace(settings, storage_connection_string=https))
    with pytest.raises(Exception, match="invalid path") as raised:
        list(client.list_tables())
    assert str(missing) in str(raised.value)


def test_requests_are_counted_by_stage_only_for_the_cost_benchmark(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(storage_calls.COUNT_CALLS_SETTING, raising=False)
    assert storage_connections(settings).on_request is None  # production

    monkeypatch.setenv(storage_calls.COUNT_CALLS_SETTING, str(tmp_path / "calls.json"))
    store = TableStore(settings)
    before = storage_calls.snapshot()
    store.ensure_tables()  # called from here: no invocation, no module asking but the adapter
    after = storage_calls.snapshot()
    counted = {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}
    assert counted == {"?: - [table POST]": len(TABLES)}


@pytest.mark.parametrize(("choice", "through_requests"), [("pooled", False), ("requests", True)])
def test_the_operator_chooses_what_storage_requests_go_through(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, choice: str, through_requests: bool
) -> None:
    """`SCHEDULER_STORAGE_TRANSPORT`: the project's transport by default, azure-core's
    `requests` one when the operator says so; both carry table and queue requests alike
    (an entity written and read, a message sent and taken), against the real Azurite."""
    sent: list[str] = []
    send = requests.adapters.HTTPAdapter.send

    def spy(self: requests.adapters.HTTPAdapter, request: object, **kw: object) -> object:
        sent.append(getattr(request, "url", ""))
        return send(self, request, **kw)  # type: ignore[arg-type]  # a PreparedRequest

    monkeypatch.setattr(requests.adapters.HTTPAdapter, "send", spy)
    chosen = replace(settings, storage_transport=TransportChoice(choice))
    store = TableStore(chosen)
    store.ensure_tables()
    table = store.table("JobHistory")
    table.upsert_entity({"PartitionKey": "p", "RowKey": "r", "N": 1})
    queue = ExecutionQueue(chosen).ready()
    queue.send_body("hello")

    assert table.get_entity("p", "r")["N"] == 1
    assert [m.body for m in queue.receive(max_messages=1, visibility_timeout=5)] == ["hello"]
    assert bool(sent) is through_requests
    if through_requests:
        assert any("JobHistory(" in url for url in sent) and any("/messages" in url for url in sent)
