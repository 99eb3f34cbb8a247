"""How every storage adapter reaches the scheduler's storage account: one factory for the
table and the queue service clients.

A connection string (Azurite, or an account key) when `Settings` has one; otherwise the
account's endpoint and the app's managed identity (`DefaultAzureCredential`, with the
user-assigned identity's client id when one is configured). The adapters pass their SDK's
client class and options, so this module imports no storage SDK itself.

Each client gets its own transport (`storage_transport.PoolTransport`: azure-core's transport
on urllib3's connection pools, without `requests`), whose pool holds as many connections per
origin as the process has threads that may call storage at once (`connection_pool_size`).
The SDKs' own session keeps 10: under load the local host's executor, dispatch workers and
API run far more requests at once, and every one past the tenth had its connection discarded
afterwards ("Connection pool is full"), so the next request paid a new TCP connection.

The transport reads its environment once, when the client is made, not on every request:
`requests` with `trust_env` looks up `~/.netrc`, the proxy variables and the CA-bundle
variables each time it sends, which was 13 % of the host's CPU under load (bench/cost.py,
docs/cost.md). The same variables still apply, read at creation: `HTTP(S)_PROXY` and
`NO_PROXY` for the client's endpoint, `REQUESTS_CA_BUNDLE` / `CURL_CA_BUNDLE` as the bundle
the client verifies TLS with. (`.netrc` never applied: the SDKs sign every request.)
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar, cast

import requests

from scheduler_lib.config import Settings
from scheduler_lib.storage_transport import PoolTransport

C = TypeVar("C")

#: Threads besides the executor's and the dispatch workers' that may call storage at once in
#: one process: the API's (Starlette runs sync work on anyio's default pool of 40), the
#: coordinator and the poison-queue worker.
OTHER_THREADS = 40 + 2
#: Threads of one dispatch worker (`dispatch.DEFAULT_WORKERS`).
DISPATCH_THREADS = 8


def connection_pool_size(settings: Settings) -> int:
    """Connections one storage client keeps open for reuse: one per thread that may use it."""
    dispatch = settings.dispatch_workers * DISPATCH_THREADS
    return settings.executor_concurrency + dispatch + OTHER_THREADS


def pooled_transport(settings: Settings, kind: str = "storage", **options: Any) -> PoolTransport:
    """The transport of one storage client (`storage_transport`), with a pool of
    `connection_pool_size` connections per origin; `options` are the client's (azure-core
    takes its timeouts and TLS settings from them).

    With `SCHEDULER_BENCH_COUNT_CALLS` set (the cost benchmark), a transport that counts its
    requests by stage (`storage_calls`); `kind` names the service in those counts."""
    transport = PoolTransport(connection_pool_size(settings), **options)
    path = os.environ.get("SCHEDULER_BENCH_COUNT_CALLS")
    if path:
        from scheduler_lib import storage_calls

        storage_calls.start_writer(path)
        transport.on_request = storage_calls.request_counter(kind)
    return transport


def service_client(client_class: type[C], settings: Settings, endpoint: str, **options: Any) -> C:
    """A `client_class` for the storage account, by connection string or by identity
    (`endpoint`: the service's endpoint, used only with the identity)."""
    factory = cast(Any, client_class)  # both SDKs' clients: from_connection_string, (url, ...)
    kind = client_class.__name__.removesuffix("ServiceClient").lower()
    if bundle := ca_bundle():
        options.setdefault("connection_verify", bundle)
    transport = options.setdefault("transport", pooled_transport(settings, kind, **options))
    if settings.storage_connection_string:
        connection = settings.storage_connection_string
        client = factory.from_connection_string(connection, **options)
    else:
        from azure.identity import DefaultAzureCredential

        credential = DefaultAzureCredential(managed_identity_client_id=settings.storage_client_id)
        client = factory(endpoint, credential=credential, **options)
    transport.proxies = requests.utils.get_environ_proxies(client.url)
    return cast(C, client)


def ca_bundle() -> str | None:
    """The CA bundle `requests` would take from the environment (None: its own, certifi)."""
    return os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE") or None


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
