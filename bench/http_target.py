"""The benchmarks' HTTP target, in a process of its own.

A real target is another machine: its CPU is not the executor's. In the executor's process
its request handling would compete with the executor for the GIL and skew what it measures.
It records each request's arrival against its `x-ms-scheduler-expected-execution-time`
header, and it has a deep listen backlog: with the default of 5, a burst of connections at
one second overflows it, and the kernel's SYN retry adds whole seconds that no scheduler
caused.
"""

from __future__ import annotations

import multiprocessing
import ssl
import threading
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from multiprocessing.connection import Connection


class _Server(ThreadingHTTPServer):
    request_queue_size = 1024
    daemon_threads = True


def _serve(conn: Connection, tls: tuple[str, str] | None = None) -> None:
    lateness: list[float] = []
    tags: list[str] = []
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            arrived = datetime.now(UTC)
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            expected = self.headers.get("x-ms-scheduler-expected-execution-time", "")
            with lock:
                lateness.append((arrived - datetime.fromisoformat(expected)).total_seconds())
                tags.append(self.headers.get("x-ms-execution-tag", ""))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = _Server(("127.0.0.1", 0), Handler)
    if tls is not None:  # HTTPS with this certificate and key (files)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*tls)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    conn.send(server.server_address[1])
    while (command := conn.recv()) != "stop":
        with lock:
            if command == "count":
                conn.send(len(lateness))
            elif command == "tags":
                conn.send(list(tags))
            else:
                conn.send(list(lateness))
            if command == "take":
                lateness.clear()
                tags.clear()
    server.shutdown()


class Target:
    """`Target()` starts it; then `url`, `count()`, `tags()` (each request's execution tag),
    `take()` (lateness in s, and forget them), `stop()`."""

    def __init__(self, *, tls: tuple[str, str] | None = None) -> None:
        """`tls`: serve HTTPS with this (certificate file, key file)."""
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child, tls), daemon=True)
        self._process.start()
        scheme = "https" if tls else "http"
        self.url = f"{scheme}://127.0.0.1:{self._conn.recv()}/hook"

    def count(self) -> int:
        self._conn.send("count")
        return self._conn.recv()

    def tags(self) -> list[str]:
        self._conn.send("tags")
        return self._conn.recv()

    def take(self) -> list[float]:
        self._conn.send("take")
        return self._conn.recv()

    def stop(self) -> None:
        self._conn.send("stop")
        self._process.join(timeout=10)
