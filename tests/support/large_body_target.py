"""A local HTTP server that answers every request with a large body it generates on the fly
(it never holds the body in memory), and counts how many body bytes it got to write before
the client hung up. A client that reads only what it needs makes the count stop at about
the socket buffers' size; a client that reads everything makes it reach `size`.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHUNK = b"x" * 65536


class LargeBodyTarget:
    """`status` with a `size`-byte body (and `headers`) for every request; see module doc."""

    def __init__(self, size: int, status: int = 200, headers: dict[str, str] | None = None):
        self.size = size
        self.status = status
        self.headers = dict(headers or {})
        self.bytes_written = 0
        self.done = threading.Event()  # set when a response ended (fully written or cut off)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> LargeBodyTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def _handler(target: LargeBodyTarget) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        timeout = 10

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            try:
                self.send_response(target.status)
                for name, value in target.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(target.size))
                self.end_headers()
                left = target.size
                while left > 0:
                    piece = CHUNK[: min(left, len(CHUNK))]
                    self.wfile.write(piece)
                    target.bytes_written += len(piece)
                    left -= len(piece)
            except OSError:
                pass  # the client closed the connection: what we measure
            finally:
                target.done.set()

        def __getattr__(self, name: str) -> Any:
            if name.startswith("do_"):
                return self._serve
            raise AttributeError(name)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
