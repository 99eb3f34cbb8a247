"""What one storage request costs in client CPU through the storage SDK, and under it.

    .venv/bin/python bench/request_floor.py [--requests 600] [--rounds 5]

Why: an occurrence's CPU follows its storage requests (docs/cost.md), so the question is
how much of a request's CPU is the request itself and how much the SDK's machinery around
it. Against a fresh Azurite, three kinds of request (a point read of a 2 KB entity, a
conditional replace of it, `update_entity` with its ETag, and a queue message sent and
deleted, per request), through each client below in turns, each round timing `--requests`
of each kind by this process's CPU clock:

- `sdk`: the project's own clients (`TableStore`, `ExecutionQueue`: azure-data-tables and
  azure-storage-queue on azure-core, through `storage_transport.PoolTransport` on
  `http.client`; the table client's point requests through `store/entity_requests.py`, the
  queue's message requests through `store/queue_requests.py`, both on
  `store/storage_pipeline.StoragePipeline`: azure-core's policies without its pipeline
  runner), what the executor and dispatcher use;
- `sdk, pipeline runner`: the same requests on azure-core's `PipelineClient` of the same
  policies and the tracing and logging policies (run whether or not a tracer is configured
  or the logger is at INFO), the project's before the ninth step;
- `sdk's own point requests`: the same table client with the SDK's own `get_entity` and
  `update_entity` (its generated client), the project's before the eighth step;
- `sdk's own queue requests`: the execution queue's `QueueClient` (azure-storage-queue's
  `send_message` and `delete_message`, on the same `PoolTransport` connections), the
  project's before its message requests went through `store/queue_requests.py`;
- `sdk, requests session`: the same clients on azure-core's `RequestsTransport` over
  `storage_account`'s trimmed `requests` session (`DirectSession`), the project's before
  the seventh step (docs/cost.md), and still its path with a proxy;
- `sdk, urllib3`: the same clients on a transport over urllib3's connection pool (below,
  `Urllib3Transport`), without `requests`;
- `sdk, fewer policies`: the table client on `PoolTransport` given `policies=` with only
  what a request needs (headers, signing, decoding, retries: no request id, user agent,
  proxy, redirect, secondary host, hooks, logging or tracing policy); the queue client
  takes no such list (no row);
- `sdk, stock`: the SDKs as they come (`from_connection_string`);
- `sdk, async`: the table SDK's `aio` client on aiohttp, one read at a time and 16 at once
  (only where aiohttp is installed: it is not one of the project's dependencies);
- `bare`: a point read by `http.client` on one kept-alive connection, signed with
  SharedKeyLite as the Table service documents it: the floor (sign, send, parse).

Printed: per kind, the median over the rounds of CPU microseconds per request, and its
ratio to the project's client (`sdk`) measured in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import copy
import hashlib
import hmac
import http.client
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from email.utils import formatdate
from pathlib import Path
from typing import Any, cast

import urllib3

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from azure.core import MatchConditions, PipelineClient  # noqa: E402
from azure.core.pipeline.policies import (  # noqa: E402
    ContentDecodePolicy,
    DistributedTracingPolicy,
    HttpLoggingPolicy,
    RetryPolicy,
)
from azure.core.pipeline.transport import RequestsTransport  # noqa: E402
from azure.data.tables import TableClient, TableServiceClient, UpdateMode  # noqa: E402
from azure.storage.queue import (  # noqa: E402
    BinaryBase64DecodePolicy,
    BinaryBase64EncodePolicy,
    QueueClient,
    QueueServiceClient,
)

from devtools.azurite import start_azurite  # noqa: E402
from scheduler_lib.config import Settings  # noqa: E402
from scheduler_lib.storage_account import pooled_session  # noqa: E402
from scheduler_lib.storage_patience import BACKGROUND  # noqa: E402
from scheduler_lib.storage_transport import (  # noqa: E402
    ConnectionPools,
    PoolTransport,
    StorageResponse,
)
from scheduler_lib.store.changeset import Changesets  # noqa: E402
from scheduler_lib.store.entity_requests import EntityRequests  # noqa: E402
from scheduler_lib.store.execution_queue import ExecutionQueue  # noqa: E402
from scheduler_lib.store.execution_queue import _client_options as queue_options  # noqa: E402
from scheduler_lib.store.storage_pipeline import StoragePipeline  # noqa: E402
from scheduler_lib.store.table_client import StoreTableClient  # noqa: E402
from scheduler_lib.store.tables import TableStore  # noqa: E402
from scheduler_lib.store.tables import _client_options as table_options  # noqa: E402

PK, RK = "p", "r"
KINDS = ("point read", "conditional replace", "queue send / delete")
BODY = "x" * 2000


def cpu_per_call(call: Callable[[], object], n: int) -> float:
    """CPU microseconds per call of `call`, over `n` calls."""
    started = time.process_time()
    for _ in range(n):
        call()
    return (time.process_time() - started) / n * 1e6


def bare_reader(connection_string: str, port: int, table: str) -> Callable[[], object]:
    """A point read by `http.client`, signed with SharedKeyLite (the Table service's
    documented scheme: the date and the canonical resource, HMAC-SHA256 with the key)."""
    parts = dict(p.split("=", 1) for p in connection_string.split(";") if "=" in p)
    account, key = parts["AccountName"], base64.b64decode(parts["AccountKey"])
    connection = http.client.HTTPConnection("127.0.0.1", port)
    resource = f"{table}(PartitionKey='{PK}',RowKey='{RK}')"

    def read() -> bytes:
        try:
            return read_once()
        except (http.client.RemoteDisconnected, ConnectionError):
            connection.close()  # Azurite closed it while the other clients ran (5 s idle)
            return read_once()

    def read_once() -> bytes:
        date = formatdate(usegmt=True)
        signed = f"{date}\n/{account}/{account}/{resource}".encode()
        signature = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
        connection.request("GET", f"/{account}/{resource}", headers={
            "x-ms-date": date, "x-ms-version": "2019-02-02",
            "Accept": "application/json;odata=minimalmetadata",
            "Authorization": f"SharedKeyLite {account}:{signature}",
        })  # fmt: skip
        answer = connection.getresponse()
        body = answer.read()
        if answer.status != 200:
            raise RuntimeError(f"{answer.status}: {body[:200]!r}")
        return body

    return read


def async_rows(connection_string: str, table: str, n: int, rounds: int) -> dict[str, list[float]]:
    """CPU per read through the SDK's aio client: one at a time, and 16 at once."""
    from azure.data.tables.aio import TableServiceClient as AioService

    times: dict[str, list[float]] = {"sdk, async": [], "sdk, async, 16 at once": []}

    async def run() -> None:
        async with AioService.from_connection_string(connection_string) as service:
            client = service.get_table_client(table)
            for _ in range(20):
                await client.get_entity(PK, RK)
            for _ in range(rounds):
                started = time.process_time()
                for _ in range(n):
                    await client.get_entity(PK, RK)
                times["sdk, async"].append((time.process_time() - started) / n * 1e6)
                started = time.process_time()
                for _ in range(n // 16):
                    await asyncio.gather(*(client.get_entity(PK, RK) for _ in range(16)))
                spent = time.process_time() - started
                times["sdk, async, 16 at once"].append(spent / (n // 16 * 16) * 1e6)

    asyncio.run(run())
    return times


#: A kept-alive connection Azurite closed between rounds (its keep-alive timeout) is sent on
#: once more, on a new one, as `PoolTransport` drops such a connection before use: without
#: it a round could end in "Connection reset by peer".
_ONE_RESEND = urllib3.Retry(total=1, connect=0, read=1, status=0, allowed_methods=None,
                            redirect=False)  # fmt: skip


class Urllib3Transport(PoolTransport):
    """`PoolTransport` sending through urllib3's pool instead of `http.client` alone."""

    def __init__(self, **options: Any) -> None:
        super().__init__(ConnectionPools(0), **options)  # its timeouts only
        self._manager = urllib3.PoolManager(maxsize=100)

    def send(self, request: Any, **kwargs: Any) -> Any:
        connect, read = self._timeouts
        raw = self._manager.urlopen(
            request.method, request.url, body=request.content, headers=request.headers,
            retries=_ONE_RESEND, redirect=False,
            timeout=urllib3.Timeout(connect=connect, read=read),
        )  # fmt: skip
        return StorageResponse(request, cast(Any, _Answer(raw)), raw.data)


class _Answer:
    """urllib3's answer as `StorageResponse` reads an http.client one."""

    def __init__(self, raw: Any) -> None:
        self.status, self.reason, self._headers = raw.status, raw.reason, raw.headers

    def getheaders(self) -> list[tuple[str, str]]:
        return list(self._headers.items())


def clients(settings: Settings, connection: str) -> dict[str, tuple[Any, Any]]:
    """(table client, queue client or None) of each variant but the bare and async ones."""
    store = TableStore(settings)
    store.ensure_tables()
    ours = store.table("JobHistory")
    queue = ExecutionQueue(settings).ready()
    service, name = store.service, ours.table_name
    t_opts, q_opts = table_options(BACKGROUND), cast(dict[str, Any], queue_options(BACKGROUND))
    transport_opts = BACKGROUND.transport_options()

    def table(**options: Any) -> TableClient:
        return StoreTableClient(
            service.url, table_name=name, credential=service.credential,
            changesets=store._changesets, entities=None, **t_opts, **options,
        )  # fmt: skip

    def queue_on(transport: Any) -> QueueClient:
        queues = QueueServiceClient.from_connection_string(
            connection, transport=transport, **q_opts
        )
        return _binary(queues, queue.name)

    def requests_transport(kind: str) -> RequestsTransport:
        return RequestsTransport(
            session=pooled_session(settings, kind), session_owner=False, **transport_opts
        )

    from azure.data.tables._authentication import _configure_credential  # measuring only
    from azure.data.tables._policies import StorageHeadersPolicy, TablesRetryPolicy

    fewer = [
        StorageHeadersPolicy(),
        _configure_credential(service.credential),
        ContentDecodePolicy(response_encoding="utf-8"),
        TablesRetryPolicy(**t_opts),
    ]
    stock = TableServiceClient.from_connection_string(connection).get_table_client(name)
    stock_queue = _binary(QueueServiceClient.from_connection_string(connection), queue.name)
    urllib3_transport = Urllib3Transport(**transport_opts)
    runner_tables = Changesets(
        service.url, service.credential, connections=store._connections, patience=BACKGROUND,
        api_version=service.api_version,
    )  # fmt: skip
    runner_tables.pipeline = on_runner(runner_tables.pipeline)
    runner_queue = copy.copy(queue._requests)
    runner_queue._pipeline = on_runner(runner_queue._pipeline)
    return {
        "sdk": (ours, lambda: _send_delete_lean(queue._requests, queue.name)),
        "sdk, pipeline runner": (
            StoreTableClient(
                service.url,
                table_name=name,
                credential=service.credential,
                changesets=runner_tables,
                entities=EntityRequests(runner_tables),
                **t_opts,
            ),
            lambda: _send_delete_lean(runner_queue, queue.name),
        ),
        "sdk's own point requests": (
            table(transport=PoolTransport(store._connections, **transport_opts)),
            None,
        ),
        "sdk's own queue requests": (None, queue.client),
        "sdk, requests session": (
            table(transport=requests_transport("table")),
            queue_on(requests_transport("queue")),
        ),
        "sdk, urllib3": (table(transport=urllib3_transport), queue_on(urllib3_transport)),
        "sdk, fewer policies": (
            table(transport=PoolTransport(store._connections, **transport_opts), policies=fewer),
            None,
        ),
        "sdk, stock": (stock, stock_queue),
    }


def on_runner(pipeline: StoragePipeline) -> PipelineClient[Any, Any]:
    """`pipeline`'s policies (a new retry policy from the same options) and transport in
    azure-core's `PipelineClient`, as `store/storage_pipeline.py` built it before."""
    user_agent, _, date, credential, _, _ = pipeline.policies
    policies = [user_agent, RetryPolicy(**BACKGROUND.retry_options()), date, credential,
                DistributedTracingPolicy(), HttpLoggingPolicy()]  # fmt: skip
    return PipelineClient("", policies=policies, transport=pipeline.transport)


def _binary(queues: QueueServiceClient, name: str) -> QueueClient:
    """The queue `name`'s client sending bytes, as `ExecutionQueue`'s does."""
    return queues.get_queue_client(
        name,
        message_encode_policy=BinaryBase64EncodePolicy(),
        message_decode_policy=BinaryBase64DecodePolicy(),
    )


def requests_of(table: Any, queue: Any, row: str) -> dict[str, Callable[[], object]]:
    """One request of each kind (the conditional replace on a row of the variant's own)."""
    kinds: dict[str, Callable[[], object]] = {}
    if callable(queue):  # the project's own: a send and a delete
        kinds["queue send / delete"] = queue
    elif queue is not None:
        kinds["queue send / delete"] = lambda: _send_delete(queue)
    if table is None:
        return kinds
    etag = [table.upsert_entity({"PartitionKey": PK, "RowKey": row, "Body": BODY})["etag"]]

    def replace() -> None:
        entity = {"PartitionKey": PK, "RowKey": row, "Body": BODY}
        condition = {"etag": etag[0], "match_condition": MatchConditions.IfNotModified}
        etag[0] = table.update_entity(entity, mode=UpdateMode.REPLACE, **condition)["etag"]

    kinds["point read"] = lambda: table.get_entity(PK, RK)
    kinds["conditional replace"] = replace
    return kinds


def _send_delete_lean(queue: Any, name: str) -> None:
    """What `ExecutionQueue.send_body` and `discard` send, through `store/queue_requests.py`."""
    sent = queue.send(name, b"{}", visibility_timeout=60)
    queue.delete(name, sent.id, sent.pop_receipt)


def _send_delete(queue: QueueClient) -> None:
    sent = queue.send_message(b"{}", visibility_timeout=60)
    queue.delete_message(sent.id, sent.pop_receipt)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    azurite = start_azurite()
    try:
        connection = azurite.connection_string
        prefix = "f" + uuid.uuid4().hex[:8]
        settings = Settings(storage_connection_string=connection, storage_prefix=prefix)
        variants = clients(settings, connection)
        ours = variants["sdk"][0]
        table = ours.table_name
        ours.upsert_entity({"PartitionKey": PK, "RowKey": RK, "N": 0, "Body": BODY})
        calls = {
            name: requests_of(t, q, f"row{i}") for i, (name, (t, q)) in enumerate(variants.items())
        }
        calls["bare"] = {"point read": bare_reader(connection, azurite.table_port, table)}
        times: dict[tuple[str, str], list[float]] = {}
        for kinds in calls.values():
            for call in kinds.values():
                cpu_per_call(call, 20)  # connections, imports, caches
        # In turns of 20 requests, so that no client's connection idles for Azurite's 5 s
        # keep-alive (it closes it: the next request, if a POST, would fail).
        turns = max(1, args.requests // 20)
        for _ in range(args.rounds):
            spent: dict[tuple[str, str], float] = {}
            for _ in range(turns):
                for name, kinds in calls.items():
                    for kind, call in kinds.items():
                        per = 2 if kind == "queue send / delete" else 1  # two requests
                        turn = cpu_per_call(call, 20) / per
                        spent[(name, kind)] = spent.get((name, kind), 0.0) + turn / turns
            for key, value in spent.items():
                times.setdefault(key, []).append(value)
        try:
            for name, values in async_rows(connection, table, args.requests, args.rounds).items():
                times[(name, "point read")] = values
        except ImportError:
            print("(aiohttp is not installed: no async rows)")
    finally:
        azurite.stop()
    print(f"\n{args.requests} requests of each kind per round, {args.rounds} rounds; CPU µs per")
    print("request (median), and against `sdk` (queue: a send and a delete, per request)\n")
    print("| client | " + " | ".join(f"{k} | against `sdk`" for k in KINDS) + " |")
    print("|---|" + "---:|---:|" * len(KINDS))
    names = dict.fromkeys(name for name, _ in times)
    for name in names:
        cells = []
        for kind in KINDS:
            found = times.get((name, kind))
            if not found:
                cells += ["", ""]
                continue
            median, base = statistics.median(found), statistics.median(times[("sdk", kind)])
            cells += [f"{median:,.0f}", f"{median / base:.2f}"]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
