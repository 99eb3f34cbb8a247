"""A real HTTP(S) server in a thread, to be the target of HTTP actions in tests.

It records every request and answers with scripted replies:

    with HttpTarget() as target:
        target.reply(500, "busy", times=2)            # the next two requests fail...
        target.reply(200, '{"ok": 1}', path="/ok")     # ...requests to /ok always succeed
        run_action(..., uri=target.url_for("/ok"))
        assert target.requests[0].header("x-ms-execution-tag") == "tag"

Replies: a rule for the request's exact path (query ignored) wins over a rule without path;
among equals the oldest rule that still has uses left wins; with no rule the answer is
`200 OK`. A reply's body may be a function of the recorded request (an echo endpoint), and
its `delay` holds the answer back (released at once by `close()`, so a timeout test does not
hold up teardown). `wait_for_requests` and `wait_for_tls_failures` block on a condition, for
tests where the request is made by another thread or the client gave up first (the target's
thread records after the client has seen a failed handshake or its own timeout). Pass an
`ssl_context` (see tests/support/certs.py) for HTTPS; with a context that requires client
certificates, failed handshakes are kept in `tls_failures`.
Request bodies are read by Content-Length (what `requests` sends).
"""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from cryptography import x509
from requests.structures import CaseInsensitiveDict


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the target received it."""

    method: str
    path: str  # path and query, as sent
    headers: CaseInsensitiveDict[str]
    body: bytes
    client_certificate_subject: str | None = None  # RFC 4514, when a client cert was shown
    #: When it arrived (`time.monotonic`), for tests that measure how late a request came.
    arrived: float = field(default_factory=time.monotonic)

    def header(self, name: str) -> str | None:
        return self.headers.get(name)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    def json(self) -> Any:
        return json.loads(self.body)

    def form(self) -> dict[str, str]:
        """An `application/x-www-form-urlencoded` body as a dict (last value wins)."""
        return {k: v[-1] for k, v in parse_qs(self.text, keep_blank_values=True).items()}


Body = bytes | str | Callable[[RecordedRequest], bytes | str]


@dataclass
class Reply:
    status: int = 200
    body: Body = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0
    path: str | None = None
    times: int | None = None  # None: forever

    def render(self, request: RecordedRequest) -> bytes:
        body = self.body(request) if callable(self.body) else self.body
        return body.encode() if isinstance(body, str) else body


class HttpTarget:
    """See the module docstring. Use as a context manager, or call `close()`."""

    def __init__(self, *, ssl_context: ssl.SSLContext | None = None, host: str = "127.0.0.1"):
        self._lock = threading.Condition()
        self._requests: list[RecordedRequest] = []
        self._replies: list[Reply] = []
        self._closing = threading.Event()
        self.tls_failures: list[str] = []
        self._server = _Server((host, 0), _handler_for(self), ssl_context, self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    # -- addresses --------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        scheme = "https" if self._server.ssl_context else "http"
        return f"{scheme}://{self._server.server_address[0]}:{self.port}"

    def url_for(self, path: str) -> str:
        return self.url + (path if path.startswith("/") else "/" + path)

    # -- scripting and inspection -----------------------------------------------------------
    def reply(
        self,
        status: int = 200,
        body: Body = b"",
        headers: Mapping[str, str] | None = None,
        *,
        path: str | None = None,
        times: int | None = None,
        delay: float = 0.0,
    ) -> None:
        """Add a reply rule (see the module docstring for which rule answers)."""
        with self._lock:
            self._replies.append(Reply(status, body, dict(headers or {}), delay, path, times))

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def requests_to(self, path: str) -> list[RecordedRequest]:
        return [r for r in self.requests if urlsplit(r.path).path == path]

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until at least `count` requests arrived; AssertionError after `timeout`."""
        self._wait(lambda: len(self._requests), count, timeout, "requests")
        return self.requests

    def wait_for_tls_failures(self, count: int = 1, timeout: float = 5.0) -> list[str]:
        """Block until at least `count` failed handshakes were recorded. The client sees the
        server's alert before the server's thread has recorded the failure, so a test must
        wait for it rather than read `tls_failures` at once."""
        self._wait(lambda: len(self.tls_failures), count, timeout, "TLS failures")
        with self._lock:
            return list(self.tls_failures)

    def _wait(self, have: Callable[[], int], count: int, timeout: float, what: str) -> None:
        with self._lock:
            if not self._lock.wait_for(lambda: have() >= count, timeout):
                raise AssertionError(f"{have()} {what} arrived, not {count}")

    # -- lifecycle --------------------------------------------------------------------------
    def close(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> HttpTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- used by the handler ----------------------------------------------------------------
    def _record(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self._requests.append(request)
            reply = self._choose(urlsplit(request.path).path)
            self._lock.notify_all()
            return reply

    def _choose(self, path: str) -> Reply:
        for wanted in (path, None):
            for reply in self._replies:
                if reply.path == wanted:
                    if reply.times is not None:
                        reply.times -= 1
                        if reply.times == 0:
                            self._replies.remove(reply)
                    return reply
        return Reply(200, b"OK", {"Content-Type": "text/plain"})

    def _hold(self, seconds: float) -> None:
        if seconds > 0:
            self._closing.wait(seconds)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    #: Connections waiting to be accepted (socketserver's default is 5): an executor with
    #: dozens of threads connects at once, and a full backlog resets the ones past it.
    request_queue_size = 128

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        ssl_context: ssl.SSLContext | None,
        target: HttpTarget,
    ) -> None:
        self.ssl_context = ssl_context
        self.target = target
        super().__init__(address, handler)

    def finish_request(self, request: Any, client_address: Any) -> None:
        """Do the TLS handshake here, in the connection's thread, not in the accept loop."""
        if self.ssl_context is None:
            super().finish_request(request, client_address)
            return
        try:
            tls = self.ssl_context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as exc:
            with self.target._lock:
                self.target.tls_failures.append(str(exc))
                self.target._lock.notify_all()
            return
        try:
            super().finish_request(tls, client_address)
        finally:
            tls.close()


def _handler_for(target: HttpTarget) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        timeout = 10  # a client that stalls does not pin a thread forever

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            subject = None
            if isinstance(self.connection, ssl.SSLSocket):
                der = self.connection.getpeercert(binary_form=True)
                if der:
                    subject = x509.load_der_x509_certificate(der).subject.rfc4514_string()
            recorded = RecordedRequest(
                self.command,
                self.path,
                CaseInsensitiveDict(self.headers.items()),
                body,
                subject,
            )
            reply = target._record(recorded)
            target._hold(reply.delay)
            payload = reply.render(recorded)
            try:
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)
            except OSError:
                pass  # the client gave up (e.g. it timed out during the delay)

        def __getattr__(self, name: str) -> Any:
            if name.startswith("do_"):  # any method, MERGE and friends included
                return self._serve
            raise AttributeError(name)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep pytest output clean; the recorded requests are the log

    return Handler
