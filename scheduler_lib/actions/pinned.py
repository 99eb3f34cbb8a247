"""A `requests` session whose connections go only where the egress policy allows.

Each new connection resolves its host once through `EgressPolicy.resolve`, which checks
every address, and the socket then connects to a checked address; the name is still what
TLS sends as SNI and verifies the certificate against, and what the Host header says. So a
DNS answer that changes between a check and the connect (DNS rebinding) cannot slip an
internal address in, and a redirect (never followed by the executors) would be checked the
same way. The HTTP action and the Storage-queue action (through azure-core's
RequestsTransport) both send through such a session.

The session never looks at redirects: with `allow_redirects=False` requests still walks into
its redirect code, which reads the whole 3xx body to free the connection (a 302 with a 200 MB
body took 200 MB of memory). Bodies are read with `read_capped`, at most `limit + 1` bytes.
"""

from __future__ import annotations

import socket
import ssl
import sys
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError
from urllib3.util import connection

from scheduler_lib.actions.egress import EgressDenied, EgressPolicy

__all__ = ["EgressDenied", "pinned_session", "read_capped"]


class _NoRedirectSession(requests.Session):
    """A Session that sees no redirect target in any answer (see the module docstring)."""

    def get_redirect_target(self, resp: requests.Response) -> None:
        return None


def pinned_session(
    policy: EgressPolicy, *, ssl_context: ssl.SSLContext | None = None
) -> requests.Session:
    """A new Session (no environment proxies or .netrc) whose every connection is checked
    by `policy`; `ssl_context` (holding a client certificate) is used for HTTPS if given."""
    session = _NoRedirectSession()
    session.trust_env = False
    adapter = _PinnedAdapter(policy, ssl_context)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def _connection_classes(policy: EgressPolicy) -> dict[str, type[HTTPConnectionPool]]:
    class _Pinned:
        """urllib3's `_new_conn`, connecting to the addresses the policy checked. (Setting
        `_dns_host` instead would not do: urllib3 derives `host`, hence SNI and the
        certificate check, from it.)"""

        def _new_conn(self: Any) -> socket.socket:
            try:
                addresses = policy.resolve(self._dns_host, self.port)
            except socket.gaierror as exc:
                raise NameResolutionError(self.host, self, exc) from exc
            failure: Exception | None = None
            for address in addresses:  # in the resolver's order, like create_connection
                try:
                    sock = connection.create_connection(
                        (address, self.port), self.timeout,
                        source_address=self.source_address, socket_options=self.socket_options,
                    )
                except TimeoutError as exc:
                    failure = ConnectTimeoutError(
                        self, f"Connection to {self.host} timed out. "
                        f"(connect timeout={self.timeout})"
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


class _PinnedAdapter(HTTPAdapter):
    def __init__(self, policy: EgressPolicy, ssl_context: ssl.SSLContext | None) -> None:
        self._pools = _connection_classes(policy)
        self._ssl_context = ssl_context
        super().__init__(max_retries=0)

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        if self._ssl_context is not None:
            kwargs["ssl_context"] = self._ssl_context
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = self._pools


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
