"""The HTTP transport under the storage clients: azure-core's `HttpTransport` on urllib3's
connection pools, without `requests` in between.

Each storage request cost ~2.7 ms of the host's CPU, most of it in the HTTP stack under
azure-core (docs/cost.md, "Fourth step"). azure-core's own `RequestsTransport` hands every
request to `requests`, which prepares it again (headers copied into its own case-insensitive
dict, the body's length worked out, the URL re-parsed), sends it through its adapter to
urllib3, builds a `requests.Response` (headers copied again), and azure-core then wraps that
in its own response (headers copied a third time). This transport sends the request azure-core
formatted straight to urllib3's pool for its origin and builds azure-core's response on
urllib3's: the same connection pool, TLS verification, timeouts and error mapping, fewer
Python calls per request.

What it keeps of the transport it replaces:

- a pool per origin of `pool_size` connections (`storage_account.connection_pool_size`);
- the timeouts azure-core passes per request (`connection_timeout`, `read_timeout`);
- TLS verified with `connection_verify` (the environment's CA bundle, read when the client
  is made, or certifi's as `requests` uses), a missing bundle failing the request before it
  connects with `requests`' own message;
- urllib3's errors mapped to azure-core's as `RequestsTransport` maps them, so the SDK's
  retry policy retries a refused connection (`ServiceRequestError`) and a dropped or stale
  pooled one (`ServiceResponseError`) as before;
- streamed responses (the table transaction's is).

A request this path does not cover goes through azure-core's `RequestsTransport` on a
`requests` session made the same way (pool size, no retries, `trust_env` off): one that a
proxy applies to (`proxies`, from `HTTP(S)_PROXY` / `NO_PROXY` when the client is made),
one with files, and azure-core's legacy `pipeline.transport.HttpRequest` (no storage call
makes one).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

import requests
import urllib3
from azure.core.configuration import ConnectionConfiguration
from azure.core.exceptions import (
    DecodeError,
    IncompleteReadError,
    ServiceRequestError,
    ServiceRequestTimeoutError,
    ServiceResponseError,
    ServiceResponseTimeoutError,
)
from azure.core.pipeline.transport import HttpTransport, RequestsTransport
from azure.core.rest import HttpRequest

# The implementation every azure-core transport builds its response on (RequestsTransport's
# and aiohttp's too): the backward-compatible `parts()` the table transaction reads, `read`,
# `iter_bytes`. azure-core exports no public one; tests/test_storage_account.py runs it.
from azure.core.rest._http_response_impl import HttpResponseImpl
from requests.utils import DEFAULT_CA_BUNDLE_PATH, select_proxy
from urllib3 import exceptions as http
from urllib3.util.retry import Retry

#: urllib3 retries nothing and follows no redirect: both are azure-core's policies' business.
NO_RETRIES = Retry(total=False, redirect=False, raise_on_status=False)
#: Methods a request without a body still sends `Content-Length: 0` with (as `requests`).
_BODILESS = frozenset({"GET", "HEAD"})


class PoolTransport(HttpTransport):
    """azure-core transport on urllib3 pools (see the module's docstring).

    `proxies` is the environment's proxy map for the client's endpoint (set once the client
    exists, `storage_account.service_client`); `on_request`, when set, is told of each
    request before it is sent (the cost benchmark's count, `storage_calls`)."""

    def __init__(self, pool_size: int, **kwargs: Any) -> None:
        self.connection_config = ConnectionConfiguration(**kwargs)
        self.pool_size = pool_size
        self.proxies: dict[str, str] = {}
        self.on_request: Callable[[str, str], None] | None = None
        self._pools: dict[tuple[str, Any, Any], urllib3.HTTPConnectionPool] = {}
        self._timeouts: dict[Any, urllib3.Timeout] = {}
        self._lock = threading.Lock()
        session = requests.Session()
        session.trust_env = False  # the environment is read once, into `proxies`
        adapter = requests.adapters.HTTPAdapter(pool_maxsize=pool_size, max_retries=NO_RETRIES)
        for scheme in ("http://", "https://"):
            session.mount(scheme, adapter)
        self.fallback = RequestsTransport(session=session, **kwargs)

    def open(self) -> None:
        pass  # pools are made on a request to their origin

    def close(self) -> None:
        with self._lock:
            pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            pool.close()
        self.fallback.close()

    def __enter__(self) -> PoolTransport:
        return self

    def __exit__(self, *args: object) -> None:
        self.close()

    def pools(self) -> list[urllib3.HTTPConnectionPool]:
        """The pools made so far, one per origin and TLS settings."""
        return list(self._pools.values())

    def send(self, request: Any, *, proxies: Any = None, **kwargs: Any) -> Any:
        url: str = request.url
        if self.on_request is not None:
            self.on_request(request.method, url)
        proxies = proxies or self.proxies
        if (
            not isinstance(request, HttpRequest)
            or request.files
            or (proxies and select_proxy(url, proxies))
            or not url.isascii()
        ):
            kwargs.pop("connection_data_block_size", None)
            return self.fallback.send(request, proxies=proxies or None, **kwargs)
        config = self.connection_config
        stream = bool(kwargs.pop("stream", False))
        verify = kwargs.pop("connection_verify", config.verify)
        cert = kwargs.pop("connection_cert", config.cert)
        timeout = self._timeout(
            kwargs.pop("connection_timeout", config.timeout),
            kwargs.pop("read_timeout", config.read_timeout),
        )
        start = url.find("/", url.find("//") + 2)
        origin, target = (url, "/") if start < 0 else (url[:start], url[start:])
        body, headers = _body(request)
        try:
            pool = self._pool(origin, verify, cert)
            raw = pool.urlopen(
                request.method, target, body=body, headers=headers, retries=NO_RETRIES,
                redirect=False, assert_same_host=False, timeout=timeout,
                preload_content=not stream, decode_content=True, enforce_content_length=True,
            )  # fmt: skip
        except http.HTTPError as exc:
            raise _azure_error(exc) from exc
        response = PoolTransportResponse(request, raw, config.data_block_size)
        if not stream:
            response._content = raw.data  # read already (preload_content)
            response.read()  # marks it read and closed, as azure-core does for RequestsTransport
        return response

    def _timeout(self, connect: Any, read: Any) -> urllib3.Timeout:
        if isinstance(connect, tuple):  # azure-core's deprecated (connect, read)
            connect, read = connect
        found = self._timeouts.get((connect, read))
        if found is None:
            found = self._timeouts[(connect, read)] = urllib3.Timeout(connect=connect, read=read)
        return found

    def _pool(self, origin: str, verify: Any, cert: Any) -> urllib3.HTTPConnectionPool:
        """The pool of `origin` (scheme://host:port) for these TLS settings, made once."""
        key = (origin, verify, cert if not isinstance(cert, list) else tuple(cert))
        pool = self._pools.get(key)
        if pool is None:
            with self._lock:
                pool = self._pools.get(key)
                if pool is None:
                    pool = urllib3.connection_from_url(
                        origin, maxsize=self.pool_size, block=False, **_tls(origin, verify, cert)
                    )
                    self._pools[key] = pool
        return pool


class PoolTransportResponse(HttpResponseImpl):
    """azure-core's response on urllib3's: its headers (case-insensitive already) as they
    are, not copied into another dict."""

    def __init__(self, request: HttpRequest, raw: urllib3.BaseHTTPResponse, block_size: int):
        headers: MutableMapping[str, str] = raw.headers
        super().__init__(
            request=request, internal_response=raw, block_size=block_size,
            status_code=raw.status, reason=raw.reason, headers=headers,
            content_type=headers.get("Content-Type"), stream_download_generator=_stream,
        )  # fmt: skip


def _stream(pipeline: Any, response: Any, *, decompress: bool = True) -> Iterator[bytes]:
    """A streamed response's body, in the response's blocks (`HttpResponseImpl.iter_bytes`)."""
    raw: urllib3.BaseHTTPResponse = response.internal_response
    try:
        yield from raw.stream(response.block_size, decode_content=decompress)
    except http.HTTPError as exc:
        raise _azure_error(exc) from exc
    finally:
        raw.release_conn()


def _body(request: HttpRequest) -> tuple[Any, Any]:
    """The body to send and the headers to send it with, as `requests` would send them: a
    str body as UTF-8 with its length in bytes, an empty body's `Content-Length: 0`."""
    body = request.content
    headers = request.headers
    if isinstance(body, str):
        body = body.encode("utf-8")
        headers = {**headers, "Content-Length": str(len(body))}
    elif body is None and request.method not in _BODILESS and "Content-Length" not in headers:
        headers = {**headers, "Content-Length": "0"}
    return body, headers


def _tls(origin: str, verify: Any, cert: Any) -> dict[str, Any]:
    """urllib3's TLS arguments for `verify` and `cert`, as `requests`' `cert_verify` makes
    them (and with its errors: a missing bundle fails before connecting)."""
    if not origin.startswith("https:"):
        return {}
    options: dict[str, Any] = {}
    if verify:
        bundle = DEFAULT_CA_BUNDLE_PATH if verify is True else verify
        if not bundle or not os.path.exists(bundle):
            raise OSError(
                f"Could not find a suitable TLS CA certificate bundle, invalid path: {bundle}"
            )
        options["cert_reqs"] = "CERT_REQUIRED"
        options["ca_cert_dir" if os.path.isdir(bundle) else "ca_certs"] = bundle
    else:
        options["cert_reqs"] = "CERT_NONE"
    if cert:
        files = (cert, None) if isinstance(cert, str) else tuple(cert)
        options["cert_file"], options["key_file"] = files
    return options


def _azure_error(exc: http.HTTPError) -> Exception:
    """azure-core's exception for urllib3's, as `RequestsTransport` maps what `requests`
    made of it: a connection not made is a request error (retried), one lost while waiting
    for or reading the answer a response error (retried too)."""
    if isinstance(exc, http.NewConnectionError):  # a ConnectTimeoutError subclass
        return ServiceRequestError(exc, error=exc)
    if isinstance(exc, http.ConnectTimeoutError):
        return ServiceRequestTimeoutError(exc, error=exc)
    if isinstance(exc, http.ReadTimeoutError):
        return ServiceResponseTimeoutError(exc, error=exc)
    if isinstance(exc, http.ProtocolError):
        if "IncompleteRead" in str(exc):
            return IncompleteReadError(exc, error=exc)
        return ServiceResponseError(exc, error=exc)
    if isinstance(exc, http.DecodeError):
        return DecodeError(exc, error=exc)
    if isinstance(exc, http.SSLError | http.ProxyError | http.PoolError | ValueError):
        return ServiceRequestError(exc, error=exc)
    return ServiceResponseError(exc, error=exc)
