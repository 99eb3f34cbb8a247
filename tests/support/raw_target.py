"""A real local TCP server that answers with exactly the bytes a test scripts, and records the
bytes of each request as they came: for what a well-behaved server (tests/support/
http_target.py) cannot send (a body cut short, a broken gzip body, no status line at all)
and what it cannot show (the request's header lines in their order and spelling).

    with RawTarget(b"HTTP/1.1 200 OK\\r\\nContent-Length: 100\\r\\n\\r\\nshort") as target:
        run_action(..., uri=target.url + "/x")
        assert target.requests[0].startswith(b"GET /x HTTP/1.1\\r\\n")

Each connection: the request is read (its head, then a Content-Length body), the answer
written, the connection closed. `answer=None` writes nothing and keeps the connection open
until the test ends (a target that never answers, nor completes a TLS handshake).
"""

from __future__ import annotations

import re
import socket
import threading


class RawTarget:
    """See the module docstring. Use as a context manager."""

    def __init__(self, answer: bytes | None) -> None:
        self.answer = answer
        self.requests: list[bytes] = []
        self._closing = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)  # a blocked accept() does not see close()
        self._open: list[socket.socket] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._listener.getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        while not self._closing.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            if self.answer is None:
                self._open.append(client)
                continue
            with client:
                client.settimeout(5)
                self.requests.append(_read_request(client))
                client.sendall(self.answer)

    def __enter__(self) -> RawTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()
        self._thread.join(timeout=5)
        for client in self._open:
            client.close()
        self._listener.close()


def _read_request(client: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        more = client.recv(65536)
        if not more:
            return data
        data += more
    head, _, body = data.partition(b"\r\n\r\n")
    length = re.search(rb"(?im)^content-length: *(\d+)", head)
    while length and len(body) < int(length.group(1)):
        more = client.recv(65536)
        if not more:
            break
        body += more
    return head + b"\r\n\r\n" + body
