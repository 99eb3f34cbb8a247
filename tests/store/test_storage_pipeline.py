"""`store/storage_pipeline.StoragePipeline` (azure-core's policies without its pipeline
runner) against azure-core's own `PipelineClient` of the same policies, as the store built
it before: a real local server in front of a real Azurite answers the first tries as
scripted (a 503, a 503 with Retry-After, a 500, a connection closed unanswered, ...) and
hands the rest to Azurite, which checks every signature. Each pipeline's transport records
the pauses azure-core's `RetryPolicy` asks of it instead of sleeping them.

Compared, for every script: what the caller gets (the status, or the error's type), how
many tries reached the server, and the pauses. Then what only a run can show: each try is
dated and signed afresh, azure-core's HTTP log lines when its logger is at INFO, a span
per try when a tracer is configured, and the tracing and logging policies left out when
neither is.
"""

from __future__ import annotations

import http.client
import json
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from urllib.parse import urlsplit
from uuid import uuid4

import pytest
from azure.core import PipelineClient
from azure.core.credentials import AzureNamedKeyCredential
from azure.core.exceptions import AzureError
from azure.core.pipeline.policies import (
    DistributedTracingPolicy,
    HttpLoggingPolicy,
    RetryPolicy,
    UserAgentPolicy,
)
from azure.core.rest import HttpRequest
from azure.core.settings import settings as azure_settings

from devtools.azurite import AZURITE_ACCOUNT, AZURITE_KEY
from scheduler_lib.config import Settings
from scheduler_lib.storage_patience import StoragePatience
from scheduler_lib.storage_transport import ConnectionPools, PoolTransport
from scheduler_lib.store.changeset import _SharedKeyPolicy
from scheduler_lib.store.queue_requests import RETRIED
from scheduler_lib.store.storage_pipeline import DatePolicy, StoragePipeline
from scheduler_lib.store.tables import TableStore

TABLE = "JobHistory"
HTTP_LOGGER = "azure.core.pipeline.policies.http_logging_policy"
SLOW = 0.6  # seconds: two slow answers outlast a second's total time, one does not


class _Front(ThreadingHTTPServer):
    """Answers the first requests as `script` says ("503", "503 after 7": with Retry-After,
    "drop": the connection closed unanswered, "slow 503": after `SLOW` s), and forwards the
    others to `target` (host, port), recording each request's method and headers."""

    daemon_threads = True

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.script: list[str] = []
        self.seen: list[tuple[str, dict[str, str]]] = []
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/{AZURITE_ACCOUNT}"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Front

    def _answer(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with self.server.lock:
            self.server.seen.append((self.command, dict(self.headers.items())))
            step = self.server.script.pop(0) if self.server.script else "forward"
        if step.startswith("slow "):  # a service slow to answer: the retries' total time
            threading.Event().wait(SLOW)
            step = step.removeprefix("slow ")
        if step == "drop":
            self.close_connection = True
            return
        if step != "forward":
            status, _, after = step.partition(" after ")
            self.send_response(int(status))
            if after:
                self.send_header("Retry-After", after)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        upstream = http.client.HTTPConnection(*self.server.target, timeout=10)
        upstream.request(self.command, self.path, body or None, dict(self.headers.items()))
        answer = upstream.getresponse()
        content = answer.read()
        upstream.close()
        self.send_response(answer.status, answer.reason)
        for name, value in answer.getheaders():
            if name.lower() not in ("content-length", "connection", "transfer-encoding"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)

    do_GET = do_PUT = do_POST = do_DELETE = _answer

    def log_message(self, *args: object) -> None:
        pass


class _Pauses(PoolTransport):
    """`PoolTransport` that records the pauses the retry policy asks for, sleeping none."""

    def __init__(self, pools: ConnectionPools) -> None:
        super().__init__(pools, connection_timeout=2, read_timeout=5)
        self.pauses: list[float] = []

    def sleep(self, duration: float) -> None:
        self.pauses.append(duration)


@pytest.fixture
def front(settings: Settings, store: TableStore) -> Iterator[_Front]:
    store.ensure_tables()
    connection = dict(
        part.split("=", 1) for part in str(settings.storage_connection_string).split(";") if part
    )
    table = urlsplit(connection["TableEndpoint"])
    server = _Front((str(table.hostname), int(table.port or 80)))
    yield server
    server.shutdown()
    server.server_close()


Clock = Callable[[], float]
CREDENTIAL = AzureNamedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY)


def _ours(patience: StoragePatience, clock: Clock | None = None) -> StoragePipeline:
    return StoragePipeline(
        _Pauses(ConnectionPools(4)),
        UserAgentPolicy(sdk_moniker="scheduler-changeset"),
        RetryPolicy(**patience.retry_options()),
        DatePolicy(clock) if clock else DatePolicy(),
        _SharedKeyPolicy(CREDENTIAL),
    )


def _reference(patience: StoragePatience, base: str) -> PipelineClient[Any, Any]:
    """The store's pipeline before: azure-core's `PipelineClient` of the same policies (its
    transport a `_Pauses`, as `.transport`)."""
    policies = [
        UserAgentPolicy(sdk_moniker="scheduler-changeset"),
        RetryPolicy(**patience.retry_options()),
        DatePolicy(),
        _SharedKeyPolicy(CREDENTIAL),
        DistributedTracingPolicy(),
        HttpLoggingPolicy(),
    ]
    transport = _Pauses(ConnectionPools(4))
    client: Any = PipelineClient(base, policies=policies, transport=transport)
    client.transport = transport
    return client


def _request(front: _Front, table: str, method: str) -> HttpRequest:
    """A read of the row, an upsert of it, or (POST) an insert of a new one."""
    base = f"{front.endpoint()}/{table}"
    headers = {"x-ms-version": "2019-02-02", "DataServiceVersion": "3.0",
               "Accept": "application/json;odata=minimalmetadata"}  # fmt: skip
    if method == "GET":
        return HttpRequest("GET", f"{base}(PartitionKey='p',RowKey='r')", headers=headers)
    headers["Content-Type"] = "application/json"
    if method == "POST":
        headers["Prefer"] = "return-no-content"
        body = json.dumps({"PartitionKey": "p", "RowKey": str(uuid4())}).encode()
        return HttpRequest("POST", base, headers=headers, content=body)
    body = b'{"PartitionKey":"p","RowKey":"r","N":1}'
    return HttpRequest(
        method, f"{base}(PartitionKey='p',RowKey='r')", headers=headers, content=body
    )


def _outcome(send: Callable[[], Any], front: _Front, pauses: list[float]) -> tuple[Any, ...]:
    before = len(front.seen)
    try:
        result: Any = send().status_code
    except AzureError as error:
        result = type(error).__name__
    return result, len(front.seen) - before, list(pauses)


SCRIPTS = [
    ("GET", ["503", "503"], {}),
    ("GET", ["503 after 7"], {}),
    ("GET", ["500", "502", "504", "408", "429"], {}),
    ("GET", ["503"] * 9, {}),  # more than the retries: the last 503 is the answer
    ("GET", ["drop"], {}),
    ("GET", ["404"], {}),
    ("PUT", ["503", "drop"], {}),
    ("PUT", ["412"], {}),
    ("POST", ["drop"], {}),  # sent, maybe carried out: not sent again
    ("POST", ["503", "500"], {}),  # the service says it did nothing: sent again
    ("POST", ["drop", "503 after 3"], {"retry_on_methods": RETRIED}),  # the queue's sends
    ("DELETE", ["drop", "drop"], {}),
    ("GET", ["slow 503"] * 3, {"timeout": 1.0}),  # no time left for a third try
    ("GET", ["slow drop"] * 3, {"timeout": 1.0}),
]


@pytest.mark.parametrize(("method", "script", "options"), SCRIPTS)
def test_every_failure_is_retried_as_azure_cores_pipeline_retries_it(
    front: _Front, settings: Settings, method: str, script: list[str], options: dict[str, Any]
) -> None:
    patience = StoragePatience(retries=4, backoff=1.0, connect_timeout=2, read_timeout=5)
    table = settings.table_name(TABLE)
    ours, reference = _ours(patience), _reference(patience, front.endpoint())
    outcomes = []
    for pipeline in (reference, ours):
        front.script = list(script)
        request = _request(front, table, method)
        send = lambda p=pipeline, r=request: p.send_request(r, **options)  # noqa: E731
        outcomes.append(_outcome(send, front, pipeline.transport.pauses))
    assert outcomes[0] == outcomes[1]
    assert outcomes[1][1] >= 1
    if "timeout" in options:
        assert outcomes[1][:2] == ("ServiceResponseTimeoutError", 2)


def test_each_try_is_dated_and_signed_afresh(front: _Front, settings: Settings) -> None:
    """A 503, then Azurite: the retry goes with the date it is sent at, and Azurite, which
    checks the signature over that date, answers it."""
    seconds = iter(range(1_800_000_000, 1_800_000_100, 7))
    pipeline = _ours(StoragePatience(retries=2, backoff=0), clock=lambda: next(seconds))
    front.script = ["503"]

    answer = pipeline.send_request(_request(front, settings.table_name(TABLE), "PUT"))

    assert answer.status_code == 204
    (_, first), (_, second) = front.seen[-2:]
    assert first["x-ms-date"] != second["x-ms-date"]
    assert first["Authorization"] != second["Authorization"]
    assert second["x-ms-date"] == "Fri, 15 Jan 2027 08:00:07 GMT"


def test_http_log_lines_at_info_are_azure_cores(
    front: _Front, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    patience = StoragePatience(retries=1, backoff=0)
    table = settings.table_name(TABLE)
    lines = []
    for pipeline in (_reference(patience, front.endpoint()), _ours(patience)):
        caplog.clear()
        with caplog.at_level(logging.INFO, logger=HTTP_LOGGER):
            pipeline.send_request(_request(front, table, "PUT"))
        lines.append([_shape(r.getMessage()) for r in caplog.records if r.name == HTTP_LOGGER])
    assert lines[0] == lines[1]
    assert len(lines[1]) == 2 and lines[1][0][0].startswith("Request URL:")

    caplog.clear()
    with caplog.at_level(logging.WARNING, logger=HTTP_LOGGER):
        ours = _ours(patience)
        ours.send_request(_request(front, table, "PUT"))
        assert ours.observers({}) == []
    assert [r for r in caplog.records if r.name == HTTP_LOGGER] == []


def _shape(message: str) -> list[str]:
    """A log record's lines, the values that change from one request to the next left out."""
    varying = ("'date'", "'etag'", "'x-ms-request-id'", "'x-ms-client-request-id'")
    return [
        line.split(": ")[0] if line.strip().lower().startswith(varying) else line
        for line in message.splitlines()
    ]


class _Span:
    """A tracing plugin (azure-core's `AbstractSpan` protocol) recording finished spans."""

    finished: ClassVar[list[_Span]] = []

    def __init__(self, span: Any = None, name: str = "span", **kwargs: Any) -> None:
        self.name = name
        self.attributes: dict[str, Any] = {}
        self.failed: Any = None

    @property
    def span_instance(self) -> _Span:
        return self

    def add_attribute(self, key: str, value: Any) -> None:
        self.attributes[key] = value

    def to_header(self) -> dict[str, str]:
        return {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}

    def set_http_attributes(self, request: Any, response: Any = None) -> None:
        self.attributes["status"] = response.status_code if response is not None else None

    def finish(self) -> None:
        _Span.finished.append(self)

    def __enter__(self) -> _Span:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.failed = exc_info[0]
        self.finish()

    @classmethod
    @contextmanager
    def change_context(cls, span: Any) -> Iterator[None]:
        yield


@pytest.fixture
def tracer() -> Iterator[type[_Span]]:
    _Span.finished = []
    azure_settings.tracing_implementation.set_value(_Span)
    try:
        yield _Span
    finally:
        azure_settings.tracing_implementation.unset_value()


def test_a_configured_tracer_gets_a_span_per_try(
    front: _Front, settings: Settings, store: TableStore, tracer: type[_Span]
) -> None:
    store.table(TABLE).upsert_entity({"PartitionKey": "p", "RowKey": "r"})
    patience = StoragePatience(retries=2, backoff=0)
    table = settings.table_name(TABLE)
    spans = []
    for pipeline in (_reference(patience, front.endpoint()), _ours(patience)):
        tracer.finished = []
        front.script = ["503", "drop"]
        pipeline.send_request(_request(front, table, "GET"))
        for span in tracer.finished:
            span.attributes.pop("az.service_request_id", None)  # Azurite's, one per answer
        spans.append([(s.name, s.attributes, s.failed) for s in tracer.finished])
        assert all(headers.get("traceparent") for _, headers in front.seen[-3:])
    assert spans[0] == spans[1]
    assert [status for _, attributes, _ in spans[1] if (status := attributes.get("status"))] == [
        503,
        200,
    ]
    assert spans[1][1][2] is not None  # the dropped try's span ended with its error
