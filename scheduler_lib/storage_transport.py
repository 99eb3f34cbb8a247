"""azure-core's transport for the storage SDKs: their requests sent on kept-alive
`http.client` connections (docs/cost.md, "SDK request CPU (seventh step)").

The SDKs take a `transport=`, azure-core's public `HttpTransport` answered with its public
`azure.core.rest.HttpResponse`. Their default sends through `requests` and urllib3 to
http.client, a third of a point read's client CPU (bench/request_floor.py); what they did
for a storage request is done here (each answer's head read by `response_head`):

- kept-alive connections per origin and TLS settings, at most `maxsize` idle (one taken per
  request, given back once its answer is read; one the server closed is dropped before use,
  found readable with nothing asked, as urllib3 finds it);
- `connection_timeout` to connect and `read_timeout` for each read, as azure-core's; TLS
  verified with `connection_verify` (a CA bundle's path; True: certifi's, as `requests`;
  False: none), a client certificate from `connection_cert`;
- errors as `RequestsTransport` maps them, so azure-core's `RetryPolicy` retries as before:
  not sent (refused, unresolved, TLS refused, connect timeout) `ServiceRequestError`
  (`...TimeoutError`); sent, not answered (reset, closed, read timeout, a short body)
  `ServiceResponseError` (`...TimeoutError`), which it does not retry for a POST;
- the answer read in full (`stream=True` gets it as one chunk: the answers are small).

A proxy in the environment: the requests go through `fallback` (`storage_account`:
azure-core's `RequestsTransport`); nothing here speaks to proxies.
"""

from __future__ import annotations

import codecs
import http.client
import json
import os
import select
import ssl
import threading
from collections import deque
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from azure.core.exceptions import (
    HttpResponseError,
    ServiceRequestError,
    ServiceRequestTimeoutError,
    ServiceResponseError,
    ServiceResponseTimeoutError,
)
from azure.core.pipeline.transport import HttpTransport
from azure.core.rest import HttpRequest, HttpResponse
from azure.core.utils import CaseInsensitiveDict
from requests.certs import where as certifi_bundle

from scheduler_lib.response_head import HeadResponse

DEFAULT_TIMEOUT = 300.0  # seconds: azure-core's (its `ConnectionConfiguration`)
Connection = http.client.HTTPConnection


class ConnectionPools:
    """One storage service's clients' kept-alive connections: per origin and TLS settings,
    at most `maxsize` idle.

    `on_request`, when set, is told of each request before it is sent (the cost benchmark's
    count, `storage_calls`). `fallback`, when set, sends instead (a proxy: see above)."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self.on_request: Callable[[str, str], None] | None = None
        self.fallback: HttpTransport[Any, Any] | None = None
        self.opened = 0  # connections made (tests and benchmarks read it)
        self.lock = threading.Lock()  # for `opened`
        self._origins: dict[tuple[str, Any, Any], _Origin] = {}

    def origin(self, key: tuple[str, Any, Any]) -> _Origin:
        return self._origins.get(key) or self._origins.setdefault(key, _Origin(*key))

    def idle(self) -> int:
        return sum(len(origin.idle) for origin in list(self._origins.values()))

    def close(self) -> None:
        """Close the idle connections (those in use close when their request ends)."""
        for origin in list(self._origins.values()):
            while origin.idle:
                origin.idle.pop().close()


class _Origin:
    """One origin's idle connections, and how to open another."""

    def __init__(self, origin: str, verify: Any, cert: Any) -> None:
        parts = urlsplit(origin)
        self.host = parts.hostname or ""
        self.https = parts.scheme == "https"
        self.port = parts.port or (443 if self.https else 80)
        self.verify, self.cert = verify, cert
        self.idle: deque[Connection] = deque()
        self._context: ssl.SSLContext | None = None

    def connect(self, timeout: float | None) -> Connection:
        """A new connection, connected (ServiceRequestError when it cannot be)."""
        if self.https:
            context = self._context or self._tls()
            connection: Connection = http.client.HTTPSConnection(
                self.host, self.port, timeout=timeout, context=context
            )
        else:
            connection = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        connection.response_class = HeadResponse  # its head read without `email`
        try:
            connection.connect()
        except TimeoutError as err:
            connection.close()
            raise ServiceRequestTimeoutError(err, error=err) from err
        except OSError as err:  # refused, unresolved, TLS refused (ssl.SSLError)
            connection.close()
            raise ServiceRequestError(err, error=err) from err
        return connection

    def _tls(self) -> ssl.SSLContext:
        """The TLS settings `requests` would use for `verify` and `cert`, made once."""
        verify = self.verify
        if verify is False:
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        else:
            bundle = verify if isinstance(verify, str) else certifi_bundle()
            if not os.path.exists(bundle):  # requests' own words for it
                raise OSError(
                    f"Could not find a suitable TLS CA certificate bundle, invalid path: {bundle}"
                )
            if os.path.isdir(bundle):
                context = ssl.create_default_context(capath=bundle)
            else:
                context = ssl.create_default_context(cafile=bundle)
        if self.cert:  # a file with both, or (certificate, key) as `requests` takes it
            context.load_cert_chain(*((self.cert,) if isinstance(self.cert, str) else self.cert))
        self._context = context
        return context

    def take(self) -> Connection | None:
        """An idle connection the server has not closed, or None."""
        while True:
            try:
                connection = self.idle.pop()
            except IndexError:
                return None
            if connection.sock is not None:
                poller = select.poll()
                poller.register(connection.sock, select.POLLIN)
                if not poller.poll(0):
                    return connection
            connection.close()  # closed by the server (or it sent what nobody asked)


class PoolTransport(HttpTransport[HttpRequest, HttpResponse]):
    """azure-core's `HttpTransport` on `ConnectionPools` (which the clients of one service
    share: closing one client's transport leaves the others' connections open). Takes the
    options `RequestsTransport` takes for these (`connection_timeout`, `read_timeout`,
    `connection_verify`, `connection_cert`), per client and per request."""

    def __init__(
        self,
        pools: ConnectionPools,
        *,
        connection_timeout: float = DEFAULT_TIMEOUT,
        read_timeout: float = DEFAULT_TIMEOUT,
        connection_verify: Any = True,
        connection_cert: Any = None,
    ) -> None:
        self.pools = pools
        self._timeouts = (connection_timeout, read_timeout)
        self._verify, self._cert = connection_verify, connection_cert

    # Nothing to open or close: the connections are the pools' (the service's clients').
    def open(self) -> None: ...

    def close(self) -> None: ...

    def __exit__(self, *args: Any) -> None: ...

    def send(self, request: HttpRequest, **kwargs: Any) -> HttpResponse:
        pools = self.pools
        if pools.on_request is not None:
            pools.on_request(request.method, request.url)
        if pools.fallback is not None:
            return pools.fallback.send(request, **kwargs)
        url = request.url
        start = url.find("/", url.find("//") + 2)
        origin, target = (url, "/") if start < 0 else (url[:start], url[start:])
        verify = kwargs.get("connection_verify", self._verify)
        place = pools.origin((origin, verify, kwargs.get("connection_cert", self._cert)))
        connection = place.take()
        if connection is None:
            connection = place.connect(kwargs.get("connection_timeout", self._timeouts[0]))
            with pools.lock:
                pools.opened += 1
        connection.sock.settimeout(kwargs.get("read_timeout", self._timeouts[1]))
        body = request.content
        try:
            connection.request(
                request.method,
                target,
                body.encode("utf-8") if isinstance(body, str) else body,
                request.headers,
            )
            answer = connection.getresponse()
            content = answer.read()
        except TimeoutError as err:
            connection.close()
            raise ServiceResponseTimeoutError(err, error=err) from err
        except (OSError, http.client.HTTPException) as err:  # reset, closed, short body
            connection.close()
            raise ServiceResponseError(err, error=err) from err
        if answer.will_close or len(place.idle) >= pools.maxsize:
            connection.close()
        else:
            place.idle.append(connection)
        return StorageResponse(request, answer, content)


class StorageResponse(HttpResponse):
    """A storage service's answer, read in full: azure-core's public `HttpResponse` (with
    none of the back-compat `__setattr__` its own response sets each attribute through)."""

    __slots__ = ("_content", "_encoding", "_headers", "_reason", "_request", "_status")

    def __init__(self, request: HttpRequest, answer: http.client.HTTPResponse, content: bytes):
        self._request = request
        self._status, self._reason = answer.status, answer.reason
        headers = CaseInsensitiveDict()
        for name, value in answer.getheaders():
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        self._headers: MutableMapping[str, str] = headers
        self._content = content
        self._encoding: str | None = None

    @property
    def status_code(self) -> int:
        return self._status

    @property
    def reason(self) -> str:
        return self._reason

    @property
    def headers(self) -> MutableMapping[str, str]:
        return self._headers

    @property
    def request(self) -> HttpRequest:
        return self._request

    @property
    def content_type(self) -> str | None:
        return self.headers.get("Content-Type")

    is_closed = is_stream_consumed = True  # read in full, its connection given back

    @property
    def encoding(self) -> str | None:
        return self._encoding

    @encoding.setter
    def encoding(self, value: str | None) -> None:
        self._encoding = value

    @property
    def url(self) -> str:
        return self._request.url

    @property
    def content(self) -> bytes:
        return self._content

    def text(self, encoding: str | None = None) -> str:
        """The body decoded as azure-core's responses decode it (UTF-8 by default)."""
        return codecs.decode(self._content, encoding or self._encoding or "utf-8-sig", "replace")

    def json(self) -> Any:
        return json.loads(self.text())

    def raise_for_status(self) -> None:
        if self.status_code >= 400:
            raise HttpResponseError(response=self)

    def __enter__(self) -> StorageResponse:
        return self

    def __exit__(self, *args: Any) -> None: ...

    def close(self) -> None: ...

    def read(self) -> bytes:
        return self._content

    body = read  # the legacy response's name (azure-storage-queue's policies ask it)

    def iter_bytes(self, **kwargs: Any) -> Iterator[bytes]:
        yield self._content

    iter_raw = iter_bytes
