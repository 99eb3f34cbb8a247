"""The storage clients' HTTP transport (`storage_transport.PoolTransport`, azure-core's transport
on urllib3's pools) against real local HTTP servers and Azurite: what azure-core's retry policy
sees of a lost connection, a refused one and a slow answer, streamed answers, bodies.
(The proxy and CA-bundle cases, and the pool's size, are in tests/test_storage_account.py.)"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from azure.core import PipelineClient
from azure.core.exceptions import (
    ServiceRequestError,
    ServiceResponseError,
    ServiceResponseTimeoutError,
)
from azure.core.pipeline.policies import RetryPolicy
from azure.core.rest import HttpRequest

from scheduler_lib.config import Settings
from scheduler_lib.storage_transport import PoolTransport
from scheduler_lib.store.tables import TableStore


class _Server:
    """A real local HTTP/1.1 server whose answer to each request `behaviour` decides:
    "drop" closes the connection unanswered, "hold" answers once `release` is set,
    "chunks" answers in chunked parts; anything else echoes the body it was sent."""

    def __init__(self) -> None:
        self.behaviours: list[str] = []
        self.seen: list[tuple[int, bytes, str | None]] = []  # client port, body, its length
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                self.do_POST()

            def do_PUT(self) -> None:
                self.do_POST()

            def do_POST(self) -> None:
                length = self.headers.get("Content-Length")
                body = self.rfile.read(int(length)) if length else b""
                server.seen.append((self.client_address[1], body, length))
                behaviour = server.behaviours.pop(0) if server.behaviours else "echo"
                if behaviour == "drop":
                    self.close_connection = True
                    return
                if behaviour == "hold":
                    server.release.wait(timeout=30)
                if behaviour == "chunks":
                    self.send_response(200)
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for part in (b"a" * 3000, b"b" * 3000):
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                    self.wfile.write(b"0\r\n\r\n")
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.release.set()
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture
def server() -> Iterator[_Server]:
    running = _Server()
    yield running
    running.stop()


def _client(url: str, retries: int, **options: float) -> PipelineClient:  # type: ignore[type-arg]  # azure-core's generic, any request type
    """A client as the storage SDKs build theirs: azure-core's retry policy over the transport."""
    retry = RetryPolicy(retry_total=retries, retry_backoff_factor=0)
    return PipelineClient(url, transport=PoolTransport(4, **options), policies=[retry])


def test_a_dropped_connection_is_a_response_error_the_retry_policy_retries(
    server: _Server,
) -> None:
    """A connection closed unanswered (a stale pooled one, a restarted service) raises
    azure-core's ServiceResponseError, which its retry policy retries, as through `requests`."""
    server.behaviours = ["drop"]
    with pytest.raises(ServiceResponseError):
        _client(server.url, retries=0).send_request(HttpRequest("PUT", server.url, content=b"x"))

    server.behaviours = ["drop"]
    retried = _client(server.url, retries=1)  # azure-core's policy retries PUT, not POST
    answer = retried.send_request(HttpRequest("PUT", server.url, content=b"y"))
    assert answer.status_code == 200 and answer.content == b"y"
    assert [body for _, body, _ in server.seen] == [b"x", b"y", b"y"]


def test_a_refused_connection_is_a_request_error() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]  # closed again before the request: refused
    with pytest.raises(ServiceRequestError):
        url = f"http://127.0.0.1:{port}/"
        _client(url, retries=0).send_request(HttpRequest("GET", url))


def test_an_answer_slower_than_the_read_timeout_is_a_response_timeout(server: _Server) -> None:
    """The client's `read_timeout` applies (the SDKs pass it to the transport)."""
    server.behaviours = ["hold"]
    client = _client(server.url, retries=0, read_timeout=0.2)
    with pytest.raises(ServiceResponseTimeoutError):
        client.send_request(HttpRequest("GET", server.url))


def test_a_streamed_answer_comes_in_blocks_and_then_frees_its_connection(
    server: _Server,
) -> None:
    """The table transaction's answer is streamed (`stream=True`); read to its end, its
    connection goes back to the pool for the next request."""
    server.behaviours = ["chunks"]
    client = _client(server.url, retries=0)
    answer = client.send_request(HttpRequest("GET", server.url), stream=True)
    blocks = list(answer.iter_bytes())
    assert b"".join(blocks) == b"a" * 3000 + b"b" * 3000
    assert all(len(block) <= 4096 for block in blocks)
    client.send_request(HttpRequest("POST", server.url, content=b"next"))
    assert len({port for port, _, _ in server.seen}) == 1


def test_a_text_body_goes_as_utf8_with_its_length_in_bytes(server: _Server) -> None:
    """azure-core gives a str body the length of the str (`requests` corrected it)."""
    text = "Zürich → 東京"
    _client(server.url, retries=0).send_request(HttpRequest("POST", server.url, content=text))
    [(_, body, length)] = server.seen
    assert body == text.encode() and length == str(len(text.encode()))


def test_an_entity_with_any_text_goes_to_storage_and_back(settings: Settings) -> None:
    table = TableStore(settings).ready().table("JobHistory")
    text = "Zürich → 東京 🕐"
    table.upsert_entity({"PartitionKey": "p", "RowKey": "r", "Text": text})
    assert table.get_entity("p", "r")["Text"] == text
    table.submit_transaction([("upsert", {"PartitionKey": "p", "RowKey": "s", "Text": text})])
    assert table.get_entity("p", "s")["Text"] == text
