"""A `requests` session whose connections go only where the egress policy allows.

Each new connection resolves its host once through `EgressPolicy.resolve`, which checks
every address, and the socket then connects to a checked address; the name is still what
TLS sends as SNI and verifies the certificate against, and what the Host header says. So a
DNS answer that changes between a check and the connect (DNS rebinding) cannot slip an
internal address in, and a redirect (never followed by the executors) would be checked the
same way. The HTTP action and the Storage-queue action (through azure-core's
RequestsTransport) both send through such a session.

A session may carry an attempt's `Deadline`: then the whole exchange (connect, TLS, sending,
the status line and headers, the body) ends by it, whatever the target does. requests'
own timeout is per socket operation, so a target that sends one byte every few seconds
never trips it; here every connect, send and read is given only the time left (the socket
timeout is set to it before each), and none starts once it is gone. No thread watches
the socket, so nothing can close a descriptor that was meanwhile reused.

The session never looks at redirects: with `allow_redirects=False` requests still walks into
its redirect code, which reads the whole 3xx body to free the connection (a 302 with a 200 MB
body took 200 MB of memory). Bodies are read with `read_capped`, at most `limit + 1` bytes.
"""

from __future__ import annotations

import http.client
import io
import socket
import ssl
import sys
import time
from collections.abc import Callable
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError
from urllib3.util import connection

from scheduler_lib.actions.egress import EgressDenied, EgressPolicy
from scheduler_lib.actions.trust import trust_context

__all__ = ["Deadline", "EgressDenied", "pinned_session", "read_capped"]


class Deadline:
    """When an attempt must be over, `seconds` after it was made. A monotonic clock (a
    parameter, as the OAuth token cache's): only the duration matters, not an instant of
    the schedule."""

    def __init__(self, seconds: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._end = clock() + seconds

    def remaining(self) -> float:
        """The seconds left; TimeoutError (what a socket raises) when none are."""
        left = self._end - self._clock()
        if left <= 0:
            raise TimeoutError(f"the attempt's deadline of {self.seconds:g} s has passed")
        return left

    @property
    def expired(self) -> bool:
        """Whether it has passed (a socket timed out at it: allow for rounding)."""
        return self._end - self._clock() <= 0.01


class _NoRedirectSession(requests.Session):
    """A Session that sees no redirect target in any answer (see the module docstring)."""

    def get_redirect_target(self, resp: requests.Response) -> None:
        return None


def pinned_session(
    policy: EgressPolicy,
    *,
    ssl_context: ssl.SSLContext | None = None,
    deadline: Deadline | None = None,
) -> requests.Session:
    """A new Session (no environment proxies or .netrc) whose every connection is checked
    by `policy`; `ssl_context` (holding a client certificate) is used for HTTPS if given;
    with a `deadline`, every exchange through it ends by then (see the module docstring)."""
    session = _NoRedirectSession()
    session.trust_env = False
    adapter = _PinnedAdapter(policy, ssl_context, deadline)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def _connection_classes(
    policy: EgressPolicy, deadline: Deadline | None
) -> dict[str, type[HTTPConnectionPool]]:
    def time_left(timeout: Any) -> Any:
        """`timeout` (a number, None or urllib3's default), shortened to the deadline."""
        if deadline is None:
            return timeout
        left = deadline.remaining()
        return min(timeout, left) if isinstance(timeout, int | float) else left

    class _Response(http.client.HTTPResponse):
        """Reads through `_DeadlineReader` when there is a deadline."""

        def __init__(self, sock: Any, *args: Any, **kwargs: Any) -> None:
            super().__init__(sock, *args, **kwargs)
            if deadline is not None:
                # Keep the socket's own reader: it holds the socket open until we are done.
                self._socket_reader = self.fp
                self.fp = io.BufferedReader(_DeadlineReader(self.fp.raw, sock, deadline))

    class _Pinned:
        """urllib3's `_new_conn`, connecting to the addresses the policy checked. (Setting
        `_dns_host` instead would not do: urllib3 derives `host`, hence SNI and the
        certificate check, from it.) With a deadline, each connect, the TLS handshake and
        each send get only the time left, and responses read through `_Response`."""

        response_class: Any = _Response

        def send(self: Any, data: Any) -> None:
            if deadline is not None and self.sock is not None:
                self.sock.settimeout(deadline.remaining())
            super().send(data)  # type: ignore[misc]  # a mixin: super() is the urllib3 connection it is mixed into

        def _new_conn(self: Any) -> socket.socket:
            try:
                addresses = policy.resolve(self._dns_host, self.port)
            except socket.gaierror as exc:
                raise NameResolutionError(self.host, self, exc) from exc
            failure: Exception | None = None
            for address in addresses:  # in the resolver's order, like create_connection
                try:
                    sock = connection.create_connection(
                        (address, self.port),
                        time_left(self.timeout),
                        source_address=self.source_address,
                        socket_options=self.socket_options,
                    )
                    if deadline is not None:  # the TLS handshake, if any, comes next
                        try:
                            sock.settimeout(deadline.remaining())
                        except TimeoutError:
                            sock.close()
                            raise
                except TimeoutError as exc:
                    failure = ConnectTimeoutError(
                        self,
                        f"Connection to {self.host} timed out. (connect timeout={self.timeout})",
                    )
                    failure.__cause__ = exc
                except OSError as exc:
                    failure = NewConnectionError(
                        self, f"Failed to establish a new connection: {exc}"
                    )
                    failure.__cause__ = exc
                else:
                    sys.audit("http.client.connect", self, self.host, self.port)
                    return sock
            assert failure is not None  # resolve returns at least one address
            raise failure

    class Connection(_Pinned, HTTPConnection):
        pass

    class SecureConnection(_Pinned, HTTPSConnection):
        pass

    class Pool(HTTPConnectionPool):
        ConnectionCls = Connection

    class SecurePool(HTTPSConnectionPool):
        ConnectionCls = SecureConnection

    return {"http": Pool, "https": SecurePool}


class _DeadlineReader(io.RawIOBase):
    """A response's socket reader that gives each read only the time left."""

    def __init__(self, raw: Any, sock: socket.socket, deadline: Deadline) -> None:
        super().__init__()
        self._raw, self._sock, self._deadline = raw, sock, deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        self._sock.settimeout(self._deadline.remaining())
        result: int | None = self._raw.readinto(buffer)
        return result

    def fileno(self) -> int:
        return int(self._raw.fileno())

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


class _PinnedAdapter(HTTPAdapter):
    def __init__(
        self, policy: EgressPolicy, ssl_context: ssl.SSLContext | None, deadline: Deadline | None
    ) -> None:
        self._pools = _connection_classes(policy, deadline)
        self._ssl_context = ssl_context
        super().__init__(max_retries=0)

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        if self._ssl_context is not None:
            kwargs["ssl_context"] = self._ssl_context
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = self._pools

    def cert_verify(self, conn: Any, url: str, verify: Any, cert: Any) -> None:
        """requests' choice of CA bundle, then that bundle's context loaded once (`trust`),
        so urllib3 does not load the file for each new connection. Not with a client
        certificate's context (its own, per attempt) nor without verification."""
        super().cert_verify(conn, url, verify, cert)
        bundle = getattr(conn, "ca_certs", None) or getattr(conn, "ca_cert_dir", None)
        if self._ssl_context is not None or cert or not bundle:
            return
        context = trust_context(bundle)
        if context is not None:
            conn.conn_kw["ssl_context"] = context
            conn.ca_certs = conn.ca_cert_dir = None


def read_capped(response: requests.Response, limit: int) -> tuple[bytes, bool]:
    """At most `limit` bytes of a streamed response's body, and whether there was more;
    reads no more than `limit + 1` bytes. The caller closes the response."""
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_content(min(limit + 1, 65536)):
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            break
    return b"".join(chunks)[:limit], size > limit
