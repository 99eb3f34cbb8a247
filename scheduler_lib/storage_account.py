"""How every storage adapter reaches the scheduler's storage account: one factory for the
table and the queue service clients.

A connection string (Azurite, or an account key) when `Settings` has one; otherwise the
account's endpoint and the app's managed identity (`DefaultAzureCredential`, with the
user-assigned identity's client id when one is configured). The adapters pass their SDK's
client class and options, so this module imports no storage SDK itself.

Each service's clients share a connection pool that keeps as many connections as the
process has threads that may call storage at once (`connection_pool_size`). The
SDKs' own session keeps 10: under load the local host's executor, dispatch workers and API
run far more requests at once, and every one past the tenth had its connection discarded
afterwards ("Connection pool is full"), so the next request paid a new TCP connection.

The environment is read once, when the client is made, not on every request:
`requests` with `trust_env` looks up `~/.netrc`, the proxy variables and the CA-bundle
variables each time it sends, which was 13 % of the host's CPU under load (bench/cost.py,
docs/cost.md). The same variables still apply, read at creation: `HTTP(S)_PROXY` and
`NO_PROXY` for the client's endpoint, `REQUESTS_CA_BUNDLE` / `CURL_CA_BUNDLE` as the bundle
the client verifies TLS with. (`.netrc` never applied: the SDKs sign every request.)

Clients send through `storage_transport.PoolTransport` (azure-core's transport interface on
kept-alive `http.client` connections, `storage_connections`), which costs a third less client
CPU per request than `requests` and urllib3 (docs/cost.md, "SDK request CPU (seventh
step)"). With a proxy in the environment, or `SCHEDULER_STORAGE_TRANSPORT=requests`, they go
through azure-core's `RequestsTransport` on a `DirectSession` as before: from the transport
to the connection pool without `requests`' per-request merging of session settings."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar, cast

import requests
from azure.core.pipeline.transport import RequestsTransport
from requests.adapters import HTTPAdapter
from requests.structures import CaseInsensitiveDict
from requests.utils import get_encoding_from_headers
from urllib3.util.retry import Retry

from scheduler_lib.concurrent_calls import MEMBER_THREADS
from scheduler_lib.config import Settings
from scheduler_lib.storage_transport import ConnectionPools, PoolTransport
from scheduler_lib.transport_choice import TransportChoice

C = TypeVar("C")

#: Threads besides the executor's and the dispatch workers' that may call storage at once in
#: one process: the API's (Starlette runs sync work on anyio's default pool of 40), the
#: coordinator and the poison-queue worker.
OTHER_THREADS = 40 + 2
#: Threads of one dispatch worker (`dispatch.DEFAULT_WORKERS`).
DISPATCH_THREADS = 8


def connection_pool_size(settings: Settings) -> int:
    """Connections one storage client keeps open for reuse: one per thread that may use it
    (a batch message's members run on the executor's `MEMBER_THREADS` besides its slots)."""
    dispatch = settings.dispatch_workers * DISPATCH_THREADS
    return settings.executor_concurrency + MEMBER_THREADS + dispatch + OTHER_THREADS


def pooled_session(settings: Settings, kind: str = "storage") -> DirectSession:
    """A session as azure-core builds its own (its retries are the SDK's business, so the
    adapter makes none), with a pool of `connection_pool_size` connections per host.

    With `SCHEDULER_BENCH_COUNT_CALLS` set (the cost benchmark), a session that counts its
    requests by stage (`storage_calls`); `kind` names the service in those counts."""
    session = _new_session(kind)
    session.trust_env = False  # see `service_client`: the environment is read once there
    size = connection_pool_size(settings)
    adapter = DirectAdapter(
        pool_maxsize=size, max_retries=Retry(total=False, redirect=False, raise_on_status=False)
    )
    for scheme in ("http://", "https://"):
        session.mount(scheme, adapter)
    return session


class DirectSession(requests.Session):
    """A session that sends what azure-core hands it straight to its adapter.

    azure-core's transport calls `Session.request` for every storage request, and `requests`
    then merges the session's settings into the request (headers, cookies, proxies, verify,
    hooks), builds a cookie jar and extracts cookies from the answer: about half of the
    host's CPU per request went there and to preparing it (bench/transport.py, docs/cost.md).
    The storage SDKs sign every request and use no cookies, hooks, redirects (azure-core
    follows them itself) or session-level auth, so a request with none of those is prepared
    once and sent; anything else goes through `requests` as before.

    `on_request`, when set, is told of each request before it is sent (the cost benchmark's
    count, `storage_calls`)."""

    on_request: Callable[[str, str], None] | None = None

    def request(  # type: ignore[override]  # requests' own signature, passed through
        self, method: str, url: str, *args: Any, **kwargs: Any
    ) -> requests.Response:
        if self.on_request is not None:
            self.on_request(method, str(url))
        if args or not _plain(kwargs):
            return super().request(method, url, *args, **kwargs)
        prepared = _prepared(method, url, kwargs.get("headers"), kwargs.get("data"))
        stream = bool(kwargs.get("stream"))
        response = self.get_adapter(url).send(
            prepared,
            stream=stream,
            timeout=kwargs.get("timeout"),
            verify=kwargs.get("verify", self.verify),
            cert=kwargs.get("cert"),
            proxies=kwargs.get("proxies") or self.proxies,
        )
        if not stream:
            response.content  # noqa: B018  # read it now, as Session.send does
        return response


def _prepared(method: str, url: str, headers: Any, data: Any) -> requests.PreparedRequest:
    """The request as `PreparedRequest.prepare` makes it, through the same steps, less the
    ones a storage request has nothing for: no cookies, no auth (the SDK signs), no hooks;
    and an ASCII URL azure-core formatted (quoted) is taken as it is, not parsed again by
    `prepare_url` (urllib3 still checks and encodes the target it sends). A URL with any
    other character goes through `prepare_url` (IDNA, quoting), headers that are not all
    str through `prepare_headers`."""
    prepared = requests.PreparedRequest()
    prepared.prepare_method(method)
    if isinstance(url, str) and url.isascii() and url.startswith(("http://", "https://")):
        prepared.url = url
    else:
        prepared.prepare_url(url, None)
    if headers and all(type(k) is str and type(v) is str for k, v in headers.items()):
        # The SDK's own headers: http.client still refuses a name or a value that would
        # split the request (requests' regex check of each was 7 % of a request's calls).
        prepared.headers = CaseInsensitiveDict(headers)
    else:
        prepared.prepare_headers(headers)
    prepared.prepare_body(data, None)
    return prepared


class DirectAdapter(HTTPAdapter):
    """`requests`' adapter for storage, through its documented override points (subclassing
    is how `requests` says to change them), doing per request only what can change per
    request:

    - the connection pool's key attributes (scheme, host, port, TLS verification) depend only
      on the URL's origin and the `verify` and `cert` passed, so they are worked out once per
      origin (`requests` parses the URL and stats the CA bundle for every request);
    - without a proxy, no proxy is looked for in the URL (twice: for the pool, for the
      request line);
    - an answer's `Set-Cookie` is not read into a cookie jar: the storage services set none
      and the SDKs never read one (`DirectSession` sends no cookies).
    Anything with a proxy goes through `requests`' own code unchanged."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._pool_keys: dict[tuple[str, Any, Any], tuple[dict[str, Any], dict[str, Any]]] = {}

    def build_connection_pool_key_attributes(
        self, request: requests.PreparedRequest, verify: Any, cert: Any = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        url = str(request.url)
        path = url.find("/", url.find("//") + 2)
        if path < 0 or not isinstance(verify, bool | str) or not isinstance(cert, str | None):
            return super().build_connection_pool_key_attributes(request, verify, cert)
        key = (url[:path], verify, cert)  # the origin: scheme, host and port
        found = self._pool_keys.get(key)
        if found is None:
            found = super().build_connection_pool_key_attributes(request, verify, cert)
            self._pool_keys[key] = found
        return found

    def get_connection_with_tls_context(
        self,
        request: requests.PreparedRequest,
        verify: Any,
        proxies: Any = None,
        cert: Any = None,
    ) -> Any:
        if proxies:
            return super().get_connection_with_tls_context(request, verify, proxies, cert)
        try:
            host, pool = self.build_connection_pool_key_attributes(request, verify, cert)
        except ValueError as exc:
            raise requests.exceptions.InvalidURL(exc, request=request) from exc
        return self.poolmanager.connection_from_host(**host, pool_kwargs=pool)

    def request_url(self, request: requests.PreparedRequest, proxies: Any) -> str:
        if proxies:
            return super().request_url(request, proxies)
        return request.path_url  # what requests sends without a proxy

    def build_response(self, req: requests.PreparedRequest, resp: Any) -> requests.Response:
        """`HTTPAdapter.build_response` without `extract_cookies_to_jar`."""
        response = requests.Response()
        # As in requests' own build_response: None when urllib3 gave no status.
        response.status_code = getattr(resp, "status", None)  # type: ignore[assignment]  # idem
        response.headers = CaseInsensitiveDict(getattr(resp, "headers", {}))
        response.encoding = get_encoding_from_headers(response.headers)
        response.raw = resp
        response.reason = resp.reason
        response.url = req.url.decode("utf-8") if isinstance(req.url, bytes) else str(req.url)
        response.request = req
        response.connection = self  # as requests sets it
        return response


#: The keyword arguments azure-core's transport passes that DirectSession handles itself.
_DIRECT = frozenset({"headers", "data", "files", "timeout", "verify", "cert", "proxies"}) | {
    "stream",
    "allow_redirects",
}


def _plain(kwargs: dict[str, Any]) -> bool:
    """Whether a request needs nothing of `requests`' session machinery: no redirects to
    follow, no files, cookies, auth, params, json or hooks."""
    if kwargs.get("allow_redirects", True) or kwargs.get("files"):
        return False
    return _DIRECT.issuperset(kwargs)


def _new_session(kind: str) -> DirectSession:
    session = DirectSession()
    path = os.environ.get("SCHEDULER_BENCH_COUNT_CALLS")
    if path:
        from scheduler_lib import storage_calls

        storage_calls.start_writer(path)
        session.on_request = storage_calls.request_counter(kind)
    return session


def storage_connections(settings: Settings, kind: str = "storage") -> ConnectionPools:
    """The connections one service's clients share (`connection_pool_size` kept open);
    counted by stage as `pooled_session`'s requests are, for the cost benchmark."""
    connections = ConnectionPools(connection_pool_size(settings))
    connections.on_request = _new_session(kind).on_request
    return connections


#: The options of azure-core's transports a storage client is given (`PoolTransport`'s).
TRANSPORT_OPTIONS = ("connection_timeout", "read_timeout", "connection_verify", "connection_cert")


def client_transport(connections: ConnectionPools, options: dict[str, Any]) -> PoolTransport:
    """A client's transport on `connections`, with the transport options among `options`."""
    return PoolTransport(connections, **{k: options[k] for k in TRANSPORT_OPTIONS if k in options})


def service_client(client_class: type[C], settings: Settings, endpoint: str, **options: Any) -> C:
    """A `client_class` for the storage account, by connection string or by identity
    (`endpoint`: the service's endpoint, used only with the identity), sending on
    `connections` (a `storage_connections`; new ones when not given)."""
    factory = cast(Any, client_class)  # both SDKs' clients: from_connection_string, (url, ...)
    kind = client_class.__name__.removesuffix("ServiceClient").lower()
    connections = options.pop("connections", None) or storage_connections(settings, kind)
    if bundle := ca_bundle():  # what TLS is verified with (else certifi's, as requests')
        options.setdefault("connection_verify", bundle)
    options.setdefault("transport", client_transport(connections, options))
    if settings.storage_connection_string:
        connection = settings.storage_connection_string
        client = factory.from_connection_string(connection, **options)
    else:
        from azure.identity import DefaultAzureCredential

        credential = DefaultAzureCredential(managed_identity_client_id=settings.storage_client_id)
        client = factory(endpoint, credential=credential, **options)
    proxies = requests.utils.get_environ_proxies(client.url)  # the transport speaks to none
    if proxies or settings.storage_transport is TransportChoice.REQUESTS:
        session = pooled_session(settings, kind)
        session.on_request, session.proxies = None, proxies  # counted by the connections
        kept = {k: options[k] for k in TRANSPORT_OPTIONS if k in options}
        connections.fallback = RequestsTransport(session=session, session_owner=False, **kept)
    return cast(C, client)


def ca_bundle() -> str | None:
    """The CA bundle `requests` would take from the environment (None: its own, certifi)."""
    return os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE") or None


class Once:
    """A setup step each storage adapter runs once per instance (creating its tables or
    queues): the first caller runs it, racing callers wait for it, later ones skip it. A
    step that raises is tried again by the next caller."""

    def __init__(self) -> None:
        self._done = False
        self._lock = threading.Lock()

    def run(self, step: Callable[[], object]) -> None:
        if self._done:
            return
        with self._lock:
            if not self._done:
                step()
                self._done = True
