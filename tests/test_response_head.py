"""`response_head.HeadResponse` reads a response's head as `http.client.HTTPResponse` does,
without the `email` package: each answer below is written as raw bytes to one end of a
real socket pair and read from the other by both classes, which must agree on the status,
reason, version, headers, framing (chunked, length), whether the connection closes, and the
body; and refuse the same malformed heads. Then through `storage_transport` to Azurite."""

from __future__ import annotations

import http.client
import socket
import threading
from typing import Any

import pytest

from scheduler_lib.config import Settings
from scheduler_lib.response_head import HeadResponse
from scheduler_lib.store.tables import TableStore

ANSWERS: dict[str, tuple[str, bytes]] = {
    "a length": ("GET", b'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nETag: W/"x"\r\n\r\nhello'),
    "chunked": (
        "GET",
        b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
    ),
    "no content": ("DELETE", b"HTTP/1.1 204 No Content\r\nx-ms-request-id: 1\r\n\r\n"),
    "not modified": ("GET", b"HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n"),
    "a HEAD": ("HEAD", b"HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n"),
    "closing": ("GET", b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok"),
    "until closed": ("GET", b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nto the end"),
    "HTTP/1.0": ("GET", b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok"),
    "HTTP/1.0 kept alive": (
        "GET",
        b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok",
    ),
    "after 100 Continue": (
        "PUT",
        b"HTTP/1.1 100 Continue\r\nX-A: 1\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n!",
    ),
    "repeated and odd headers": (
        "GET",
        b"HTTP/1.1 412 Precondition Failed  \r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\n"
        b"X-Spaced:    padded value  \r\nX-Latin: caf\xe9\r\nX-Empty:\r\nContent-Length: 0\r\n\r\n",
    ),
    "a folded header": (
        "GET",
        b"HTTP/1.1 200 OK\r\nX-Folded: first\r\n  second\r\n\tthird\r\nContent-Length: 0\r\n\r\n",
    ),
    "a bad length": ("GET", b"HTTP/1.1 200 OK\r\nContent-Length: many\r\n\r\nabc"),
}

REFUSED: dict[str, bytes] = {
    "too many headers": b"HTTP/1.1 200 OK\r\n" + b"X-N: 1\r\n" * 101 + b"\r\n",
    "a header line too long": b"HTTP/1.1 200 OK\r\nX-Long: " + b"a" * 70000 + b"\r\n\r\n",
    "not HTTP": b"SPDY/3 200 OK\r\n\r\n",
    "no status": b"",
}


def _read(kind: type[http.client.HTTPResponse], method: str, raw: bytes) -> dict[str, Any]:
    server, client = socket.socketpair()
    try:
        writer = threading.Thread(target=lambda: (server.sendall(raw), server.close()))
        writer.start()
        response = kind(client, method=method)
        response.begin()
        seen = {
            "status": response.status,
            "reason": response.reason,
            "version": response.version,
            "headers": response.getheaders(),
            "etag": response.getheader("etag"),
            "cookies": response.getheader("SET-COOKIE"),
            "missing": response.getheader("x-missing", "default"),
            "chunked": response.chunked,
            "length": response.length,
            "will_close": response.will_close,
            "body": response.read(),
        }
        writer.join()
        return seen
    finally:
        client.close()


@pytest.mark.parametrize("name", ANSWERS)
def test_a_head_is_read_as_http_client_reads_it(name: str) -> None:
    method, raw = ANSWERS[name]
    assert _read(HeadResponse, method, raw) == _read(http.client.HTTPResponse, method, raw)


@pytest.mark.parametrize("name", REFUSED)
def test_a_malformed_head_is_refused_as_http_client_refuses_it(name: str) -> None:
    raised = []
    for kind in (HeadResponse, http.client.HTTPResponse):
        with pytest.raises(http.client.HTTPException) as caught:
            _read(kind, "GET", REFUSED[name])
        raised.append(type(caught.value))
    assert raised[0] is raised[1]


def test_storage_answers_are_read_by_it(settings: Settings) -> None:
    """The store's connections read their answers' heads with `HeadResponse` (and the
    `email` package is not called for them)."""
    store = TableStore(settings)
    store.ensure_tables()
    table = store.table("Jobs")
    table.upsert_entity({"PartitionKey": "p", "RowKey": "r", "N": 1})
    connections = store._connections
    [origin] = [o for o in connections._origins.values() if o.idle]
    assert all(c.response_class is HeadResponse for c in origin.idle)
    assert table.get_entity("p", "r").metadata["etag"]
