"""The HTTP action's one request and its answer, on `http.client` (docs/cost.md, "The HTTP
action without `requests` (ninth step)").

A `requests` Session per attempt (with urllib3's pool and connection under it) cost ~2.1 ms
of CPU per call on the same local target where an `http.client` connection cost ~0.45 ms,
and the action's call was the largest part of an occurrence's CPU. Nothing of the Session
was used: one request, no pool kept, no redirect followed, no cookie, no proxy. So the
request is sent here, doing what requests and urllib3 did for it:

- The URL as requests prepared it (`PreparedRequest.prepare_url`, its own function: the
  IDNA host, dot segments removed, the path and query percent-encoded by `requote_uri`,
  the fragment dropped); the host is connected to without a trailing dot or IPv6 brackets,
  and named so in the Host header (with the port when it is not the scheme's default), in
  SNI and in the certificate check. User information in the URI (refused when a job is
  stored) is refused here too: requests sent it as a Basic header the job never declared.
- `DEFAULT_HEADERS`, requests' defaults, under the caller's; `Content-Length` for a body,
  and `Content-Length: 0` for a request without one other than GET and HEAD, as requests.
- The connection: `checked_socket.connect` (the egress policy's checked address, the
  deadline), TLS with the given context (a client certificate's, into which the trusted
  bundle is loaded as urllib3 did) or the shared trust of `trust`.
- The answer: its head read by `response_head.HeadResponse` (without the `email` package),
  every read within the deadline (`checked_socket.read_within`), duplicate header fields
  joined by ", " and a folded one unfolded, as urllib3's headers show them; the body read by
  `read_capped`: at most `limit + 1` bytes, chunked or not, gzip and deflate decoded
  (requests asked for them with its `Accept-Encoding` and decoded them), a body cut short
  an `IncompleteRead` (urllib3 enforced Content-Length, too).
"""

from __future__ import annotations

import functools
import http.client
import socket
import ssl
import sys
import zlib
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from requests.certs import where as certifi_bundle
from requests.exceptions import InvalidSchema
from requests.models import PreparedRequest

from scheduler_lib.actions.checked_socket import Deadline, connect, limit_to, read_within
from scheduler_lib.actions.egress import EgressPolicy
from scheduler_lib.actions.trust import trust_context
from scheduler_lib.response_head import HeadResponse

#: The headers requests sent by default (its User-Agent is replaced by the action's).
DEFAULT_HEADERS = {"Accept-Encoding": "gzip, deflate", "Accept": "*/*", "Connection": "keep-alive"}
#: urllib3's default socket option (and http.client's): no Nagle delay before the body.
_NODELAY: list[tuple[int, int, int | bytes]] = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
_CHUNK = 65536


class UserInfoInUri(ValueError):
    """The URI carries `user:password@`: nothing is sent (see the module docstring)."""


class DecodingError(ValueError):
    """The body's gzip or deflate encoding could not be decoded."""


class Answer:
    """A response whose status line and headers came; its body is read by `read_capped`.
    Use as a context manager: leaving closes the response and its connection."""

    def __init__(self, connection: http.client.HTTPConnection, response: HeadResponse) -> None:
        self._connection, self.response = connection, response
        self.status = response.status
        joined: dict[str, tuple[str, str]] = {}
        for name, value in response.getheaders():
            value = " ".join(part.strip(" \t") for part in value.split("\r\n"))  # unfolded
            first = joined.get(name.lower())
            joined[name.lower()] = (first[0], f"{first[1]}, {value}") if first else (name, value)
        #: (name, value) in order of first appearance, duplicates joined.
        self.headers = list(joined.values())

    def header(self, name: str) -> str | None:
        for field, value in self.headers:
            if field.lower() == name.lower():
                return value
        return None

    def __enter__(self) -> Answer:
        return self

    def __exit__(self, *args: Any) -> None:
        self.response.close()
        self._connection.close()


def send(
    policy: EgressPolicy,
    method: str,
    uri: str,
    headers: Mapping[str, str],
    body: bytes | None,
    *,
    deadline: Deadline,
    verify: bool | str = True,
    ssl_context: ssl.SSLContext | None = None,
) -> Answer:
    """Send one request and read the answer's status line and headers. Raises EgressDenied,
    UserInfoInUri, requests' InvalidURL or InvalidSchema (as requests did), OSError (refused,
    unresolved, TLS, TimeoutError at the deadline) or http.client.HTTPException."""
    if "@" in urlsplit(uri).netloc:
        raise UserInfoInUri(
            "must not contain user information ('user:password@'); nothing was sent: "
            "put the credentials in authentication of type Basic"
        )
    prepared = PreparedRequest()
    prepared.prepare_url(uri, None)
    parts = urlsplit(str(prepared.url))
    if parts.scheme not in ("http", "https"):  # refused when a job is stored; requests' words
        raise InvalidSchema(f"No connection adapters were found for {uri!r}")
    https = parts.scheme == "https"
    dns_host = parts.hostname or ""
    port = parts.port or (443 if https else 80)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    context = _tls(verify, ssl_context) if https else None
    connection = _Connection(dns_host, port, policy, deadline, context)
    try:
        connection.putrequest(method, target, skip_accept_encoding=True)
        for name, value in headers.items():
            connection.putheader(name, value)
        if body:
            connection.putheader("Content-Length", str(len(body)))
        elif method not in ("GET", "HEAD"):
            connection.putheader("Content-Length", "0")
        connection.endheaders(body or None)
        response = connection.getresponse()
    except BaseException:
        connection.close()
        raise
    assert isinstance(response, HeadResponse)
    return Answer(connection, response)


def _tls(verify: bool | str, ssl_context: ssl.SSLContext | None) -> ssl.SSLContext:
    """The context to wrap with: the client certificate's, trusting also the bundle urllib3
    loaded into it; else the shared context of the bundle (`trust`; True: certifi's, as
    requests); False: none verified."""
    if ssl_context is not None:
        if verify is True:  # a bundle path is the client context's own already
            ssl_context.load_verify_locations(certifi_bundle())
        return ssl_context
    if verify is False:
        unverified = ssl.create_default_context()
        unverified.check_hostname = False
        unverified.verify_mode = ssl.CERT_NONE
        return unverified
    bundle = certifi_bundle() if verify is True else verify
    context = trust_context(bundle)
    if context is None:  # requests' own words for it
        raise OSError(
            f"Could not find a suitable TLS CA certificate bundle, invalid path: {bundle}"
        )
    return context


class _Connection(http.client.HTTPConnection):
    """A connection to a checked address of its host, within the deadline."""

    def __init__(
        self,
        dns_host: str,
        port: int,
        policy: EgressPolicy,
        deadline: Deadline,
        context: ssl.SSLContext | None,
    ) -> None:
        super().__init__(dns_host.rstrip("."), port)  # the name as Host, SNI, certificate
        self._dns_host, self._policy, self._deadline = dns_host, policy, deadline
        self._context = context
        self.default_port = 443 if context is not None else 80
        self.response_class = functools.partial(_response, deadline=deadline)  # type: ignore[assignment]  # a factory of HeadResponse, which is all getresponse needs

    def connect(self) -> None:
        sock = connect(
            self._policy, self._dns_host, self.port, timeout=None, deadline=self._deadline,
            socket_options=_NODELAY,
        )  # fmt: skip
        sys.audit("http.client.connect", self, self.host, self.port)
        if self._context is not None:
            try:
                sock = self._context.wrap_socket(sock, server_hostname=self.host)
            except BaseException:
                sock.close()
                raise
        self.sock = sock

    def send(self, data: Any) -> None:
        limit_to(self.sock, self._deadline)
        super().send(data)


def _response(sock: socket.socket, *, deadline: Deadline, **kwargs: Any) -> HeadResponse:
    response = HeadResponse(sock, **kwargs)
    read_within(response, sock, deadline)
    return response


def read_capped(answer: Answer, limit: int) -> tuple[bytes, bool]:
    """At most `limit` bytes of the body, and whether there was more; decodes (reads) no
    more than `limit + 1` bytes, and a gzip or deflate body only as far as they need."""
    response = answer.response
    encoding = (answer.header("Content-Encoding") or "").strip().lower()
    decoder = _Decoder(encoding) if encoding in ("gzip", "x-gzip", "deflate") else None
    body = bytearray()
    while len(body) <= limit:
        want = limit + 1 - len(body)
        if decoder is not None and decoder.pending:
            piece = decoder.decode(b"", want)
            if piece:
                body += piece
                continue
        raw = response.read(min(want, _CHUNK) if decoder is None else min(limit + 1, _CHUNK))
        if not raw:
            if response.length:  # the connection closed before Content-Length bytes came
                raise http.client.IncompleteRead(bytes(body), response.length)
            break
        body += decoder.decode(raw, want) if decoder is not None else raw
    return bytes(body[:limit]), len(body) > limit


class _Decoder:
    """gzip (its members one after the other) or deflate (zlib-wrapped, else raw, as
    urllib3 accepted both), giving at most the bytes asked for at a time."""

    def __init__(self, encoding: str) -> None:
        self._gzip = encoding != "deflate"
        self._wbits = 16 + zlib.MAX_WBITS if self._gzip else zlib.MAX_WBITS
        self._zlib = zlib.decompressobj(self._wbits)
        self._tail = b""  # input not decoded yet (the output limit was reached)
        #: deflate's input before any output, for the retry as raw deflate (None: too late).
        self._seen: bytes | None = None if self._gzip else b""
        self._later_member = False

    @property
    def pending(self) -> bool:
        return bool(self._tail)

    def decode(self, data: bytes, most: int) -> bytes:
        data, self._tail = self._tail + data, b""
        try:
            out = self._zlib.decompress(data, most)
        except zlib.error as exc:
            if self._later_member:  # urllib3 ignored what follows a good first member
                return b""
            if self._seen is None:
                raise DecodingError(
                    f"the {'gzip' if self._gzip else 'deflate'} body: {exc}"
                ) from exc
            data, self._seen = self._seen + data, None
            self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
            return self.decode(data, most)
        if self._seen is not None:
            self._seen = None if out else self._seen + data
        self._tail = self._zlib.unconsumed_tail
        if self._gzip and self._zlib.eof and self._zlib.unused_data:
            self._tail = self._zlib.unused_data + self._tail
            self._zlib = zlib.decompressobj(self._wbits)
            self._later_member = True
        return out
