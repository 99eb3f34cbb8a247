"""A real HTTP server that answers one byte at a time: the slow target an attempt's deadline
must cut off (a slow-loris in reverse).

    with TrickleTarget(part="headers", interval=0.25, length=40) as target:
        run_action(..., uri=target.url)

`part="headers"`: the status line and headers come one byte every `interval` seconds (a
padding header makes them `length` bytes long at least). `part="body"`: the headers come at
once, then a body of `length` bytes one byte at a time. Each byte is its own TCP segment
(TCP_NODELAY), so no read on the client's side waits longer than `interval`: a per-read
timeout never fires. An `ssl_context` makes it HTTPS. The server sleeps between bytes (on
an event that `close()` sets, so teardown does not wait) and stops when the client has
gone. `requests` lists when each request arrived and `finished` when the server stopped
sending on that connection and why.
"""

from __future__ import annotations

import socket
import ssl
import threading
import time
from typing import Literal


class TrickleTarget:
    """See the module docstring. Use as a context manager."""

    def __init__(
        self,
        *,
        part: Literal["headers", "body"],
        interval: float,
        length: int = 40,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.part, self.interval, self.length = part, interval, length
        self._ssl_context = ssl_context
        self.requests: list[float] = []  # time.monotonic() when each request was read
        self.finished: list[tuple[float, str]] = []  # (when, "complete" | "client gone")
        self._closing = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._threads: list[threading.Thread] = []
        accept = threading.Thread(target=self._accept, daemon=True)
        accept.start()
        self._threads.append(accept)

    @property
    def url(self) -> str:
        """http://127.0.0.1:port/slow, or https://localhost:port/slow (the name the test
        certificate is for) with an `ssl_context`."""
        port = self._listener.getsockname()[1]
        if self._ssl_context is None:
            return f"http://127.0.0.1:{port}/slow"
        return f"https://localhost:{port}/slow"

    def _accept(self) -> None:
        self._listener.settimeout(0.05)  # a blocked accept() does not see close()
        while not self._closing.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return  # closed
            thread = threading.Thread(target=self._serve, args=(connection,), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _response(self) -> tuple[bytes, bytes]:
        """(what is sent at once, what is trickled)."""
        if self.part == "headers":
            pad = b"X-Pad: " + b"p" * max(0, self.length - 60) + b"\r\n"
            head = b"HTTP/1.1 200 OK\r\n" + pad + b"Content-Length: 2\r\n\r\nok"
            return b"", head
        head = f"HTTP/1.1 200 OK\r\nContent-Length: {self.length}\r\n\r\n".encode()
        return head, b"b" * self.length

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            connection.settimeout(10)
            received = b""
            try:
                if self._ssl_context is not None:  # one TLS record per byte, likewise
                    connection = self._ssl_context.wrap_socket(connection, server_side=True)
                while b"\r\n\r\n" not in received:
                    chunk = connection.recv(4096)
                    if not chunk:
                        return
                    received += chunk
                self.requests.append(time.monotonic())
                at_once, trickled = self._response()
                connection.sendall(at_once)
                for index in range(len(trickled)):
                    if self._closing.wait(self.interval):
                        return
                    connection.sendall(trickled[index : index + 1])
                self.finished.append((time.monotonic(), "complete"))
            except OSError:
                self.finished.append((time.monotonic(), "client gone"))

    def close(self) -> None:
        self._closing.set()
        self._listener.close()
        for thread in self._threads:
            thread.join(timeout=5)

    def __enter__(self) -> TrickleTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
