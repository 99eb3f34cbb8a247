"""The storage clients' transport (`storage_transport.PoolTransport`) where a storage service
misbehaves: a real local server standing in for the Table service (Azurite always answers),
and what azure-core's retry policy makes of each failure, as it did with `requests`.

- a connection closed without an answer: a GET is tried again, a POST is not (it may have
  been carried out: sending it again could insert twice);
- an answer that never comes: `ServiceResponseTimeoutError` after `read_timeout`;
- nothing listening: `ServiceRequestError` (nothing was sent);
- a kept-alive connection the server closed while idle: the next request, a POST, goes on a
  new connection rather than failing on the dead one.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from azure.core.exceptions import (
    ServiceRequestError,
    ServiceResponseError,
    ServiceResponseTimeoutError,
)
from azure.data.tables import TableClient

from devtools.azurite import AZURITE_ACCOUNT, AZURITE_KEY, free_port
from scheduler_lib.config import Settings
from scheduler_lib.storage_patience import StoragePatience
from scheduler_lib.store.tables import TableStore

ENTITY = b'{"PartitionKey":"p","RowKey":"r","N":1}'


class _Table(ThreadingHTTPServer):
    """A local HTTP/1.1 server answering point reads and inserts as the Table service does,
    each connection served by `behaviour`: "answer" (kept alive), "answer once" (answered,
    then closed without saying so), "drop" (closed unanswered), "hang" (never answered)."""

    daemon_threads = True

    def __init__(self, behaviour: str) -> None:
        self.behaviour = behaviour
        self.requests: list[str] = []
        self.connections = 0
        self.closed = threading.Semaphore(0)  # released once per connection this server closed
        self.release = threading.Event()  # ends the "hang"
        super().__init__(("127.0.0.1", 0), _Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def get_request(self) -> tuple[socket.socket, object]:
        self.connections += 1  # the serving thread accepts them one at a time
        return super().get_request()

    def shutdown_request(self, request: socket.socket) -> None:  # type: ignore[override]  # socketserver's
        super().shutdown_request(request)
        self.closed.release()

    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/{AZURITE_ACCOUNT}"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Table

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.server.requests.append(self.command)
        behaviour = self.server.behaviour
        if behaviour == "drop":
            self.close_connection = True
            return
        if behaviour == "hang":
            self.server.release.wait(30)
            self.close_connection = True
            return
        if self.command == "GET":
            self.send_response(200)
            self.send_header("Content-Type", "application/json;odata=minimalmetadata")
            self.send_header("Content-Length", str(len(ENTITY)))
            self.send_header("ETag", "W/\"datetime'2026-11-26T00%3A00%3A00Z'\"")
            self.end_headers()
            self.wfile.write(ENTITY)
        else:
            self.send_response(204)
            self.send_header("ETag", "W/\"datetime'2026-11-26T00%3A00%3A01Z'\"")
            self.send_header("Content-Length", "0")
            self.end_headers()
        self.close_connection = behaviour == "answer once"  # no "Connection: close" sent

    do_GET = do_POST = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def table_server(request: pytest.FixtureRequest) -> Iterator[_Table]:
    server = _Table(request.param)
    yield server
    server.release.set()
    server.shutdown()
    server.server_close()


def _table(endpoint: str, patience: StoragePatience) -> TableClient:
    settings = Settings(
        storage_connection_string=(
            f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};"
            f"AccountKey={AZURITE_KEY};TableEndpoint={endpoint};"
        ),
        storage_prefix="t",
    )
    return TableStore(settings, patience=patience).table("JobHistory")


TWO_RETRIES = StoragePatience(retries=2, backoff=0, connect_timeout=2, read_timeout=5)


@pytest.mark.parametrize("table_server", ["drop"], indirect=True)
def test_a_get_without_an_answer_is_tried_again_a_post_is_not(table_server: _Table) -> None:
    table = _table(table_server.endpoint(), TWO_RETRIES)
    with pytest.raises(ServiceResponseError):
        table.get_entity("p", "r")
    with pytest.raises(ServiceResponseError):
        table.create_entity({"PartitionKey": "p", "RowKey": "s"})
    assert table_server.requests == ["GET"] * 3 + ["POST"]


@pytest.mark.parametrize("table_server", ["hang"], indirect=True)
def test_an_answer_that_never_comes_times_out_after_the_read_timeout(
    table_server: _Table,
) -> None:
    patience = StoragePatience(retries=0, connect_timeout=2, read_timeout=0.3)
    table = _table(table_server.endpoint(), patience)
    with pytest.raises(ServiceResponseTimeoutError):
        table.get_entity("p", "r")
    assert table_server.requests == ["GET"]


def test_nothing_listening_is_a_request_error() -> None:
    patience = StoragePatience(retries=1, backoff=0, connect_timeout=2, read_timeout=2)
    table = _table(f"http://127.0.0.1:{free_port()}/{AZURITE_ACCOUNT}", patience)
    with pytest.raises(ServiceRequestError) as raised:
        table.get_entity("p", "r")
    assert not isinstance(raised.value, ServiceResponseError)
    assert isinstance(raised.value.inner_exception, ConnectionRefusedError)


@pytest.mark.parametrize("table_server", ["answer once"], indirect=True)
def test_a_connection_the_server_closed_while_idle_is_not_used_again(
    table_server: _Table,
) -> None:
    """Fails without the check of an idle connection before it is taken: the POST would go
    on the closed connection, fail, and not be tried again."""
    table = _table(table_server.endpoint(), TWO_RETRIES)
    assert table.get_entity("p", "r")["N"] == 1
    assert table_server.closed.acquire(timeout=10)  # the server closed that connection
    table.create_entity({"PartitionKey": "p", "RowKey": "s"})
    assert table_server.requests == ["GET", "POST"]
    assert table_server.connections == 2


@pytest.mark.parametrize("table_server", ["answer"], indirect=True)
def test_requests_one_after_another_share_one_connection(table_server: _Table) -> None:
    store_table = _table(table_server.endpoint(), TWO_RETRIES)
    for _ in range(5):
        store_table.get_entity("p", "r")
        store_table.create_entity({"PartitionKey": "p", "RowKey": "s"})
    assert table_server.requests == ["GET", "POST"] * 5
    assert table_server.connections == 1
