"""A `requests` session whose connections go only where the egress policy allows.

Each new connection resolves its host once through `EgressPolicy.resolve`, which checks
every address, and the socket then connects to a checked address; the name is still what
TLS sends as SNI and verifies the certificate against, and what the Host header says. So a
DNS answer that changes between a check and the connect (DNS rebinding) cannot slip an
internal address in, and a redirect (never followed by the executors) would be checked the
same way. The OAuth token request and the Storage-queue action (through azure-core's
RequestsTransport) send through such a session; the HTTP action's own request is sent on
`http.client` (`exchange`), with the same connect.

A session may carry an attempt's `Deadline`: then the whole exchange (connect, TLS, sending,
the status line and headers, the body) ends by it, whatever the target does. The connect
to a checked address and the deadline's socket timeouts are `checked_socket`'s, the same
the HTTP action's own exchange (`exchange`) uses.

The session never looks at redirects: with `allow_redirects=False` requests still walks into
its redirect code, which reads the whole 3xx body to free the connection (a 302 with a 200 MB
body took 200 MB of memory). Bodies are read with `read_capped`, at most `limit + 1` bytes.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import sys
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError

from scheduler_lib.actions.checked_socket import Deadline, connect, limit_to, read_within
from scheduler_lib.actions.egress import EgressDenied, EgressPolicy
from scheduler_lib.actions.trust import trust_context

__all__ = ["Deadline", "EgressDenied", "pinned_session", "read_capped"]


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
    class _Response(http.client.HTTPResponse):
        """Reads through `checked_socket.DeadlineReader` when there is a deadline."""

        def __init__(self, sock: Any, *args: Any, **kwargs: Any) -> None:
            super().__init__(sock, *args, **kwargs)
            read_within(self, sock, deadline)

    class _Pinned:
        """urllib3's `_new_conn`, connecting to the addresses the policy checked
        (`checked_socket.connect`). (Setting `_dns_host` instead would not do: urllib3
        derives `host`, hence SNI and the certificate check, from it.) With a deadline,
        each connect, the TLS handshake and each send get only the time left, and
        responses read through `_Response`."""

        response_class: Any = _Response

        def send(self: Any, data: Any) -> None:
            limit_to(self.sock, deadline)
            super().send(data)  # type: ignore[misc]  # a mixin: super() is the urllib3 connection it is mixed into

        def _new_conn(self: Any) -> socket.socket:
            try:
                sock = connect(
                    policy,
                    self._dns_host,
                    self.port,
                    timeout=self.timeout,
                    deadline=deadline,
                    source_address=self.source_address,
                    socket_options=self.socket_options,
                )
            except socket.gaierror as exc:
                raise NameResolutionError(self.host, self, exc) from exc
            except TimeoutError as exc:
                raise ConnectTimeoutError(
                    self, f"Connection to {self.host} timed out. (connect timeout={self.timeout})"
                ) from exc
            except OSError as exc:
                raise NewConnectionError(
                    self, f"Failed to establish a new connection: {exc}"
                ) from exc
            sys.audit("http.client.connect", self, self.host, self.port)
            return sock

    class Connection(_Pinned, HTTPConnection):
        pass

    class SecureConnection(_Pinned, HTTPSConnection):
        pass

    class Pool(HTTPConnectionPool):
        ConnectionCls = Connection

    class SecurePool(HTTPSConnectionPool):
        ConnectionCls = SecureConnection

    return {"http": Pool, "https": SecurePool}


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
