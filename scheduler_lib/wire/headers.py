"""HTTP action request headers on the wire: only what an HTTP client can actually send, and
none that the client writes itself.

The client builds the request's routing, framing and connection handling from the `uri`
and the `body`; a job's own value for one of those fields is refused (`CLIENT_HEADERS`, each
with its reason from RFC 9110 / RFC 9112), when the job is stored and, for a job stored
before, when it runs (`actions/http.py` fails that attempt without sending anything: the
request without the header would not be the request the job describes either).
"""

from __future__ import annotations

import re
from typing import Any

from scheduler_lib.errors import ValidationError
from scheduler_lib.wire import readers

#: An HTTP header name is a token (RFC 9110 5.1): visible ASCII except separators.
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
#: Control characters a header value may not hold (RFC 9110 5.5; a tab is allowed).
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")

_HOP_BY_HOP = (
    "is a hop-by-hop field (RFC 9110 7.6.1) about the client's own connection, which the "
    "client manages"
)
#: Lower-case name -> why a job may not set it. Host and the framing fields decide where a
#: request goes and where it ends: a value the client did not derive from the uri and body
#: reaches a virtual host the egress policy never judged, or lets the target (or a proxy in
#: front of it) read the body as a second request (request smuggling). The hop-by-hop fields
#: belong to the connection, not to the request the job describes.
CLIENT_HEADERS = {
    "host": "is set by the client from the uri (RFC 9110 7.2); another value would reach a "
    "virtual host the egress policy never judged: put the host in the uri",
    "content-length": "frames the body (RFC 9112 6.2) and is set by the client from the "
    "body as sent (placeholders change its length); another value would desynchronise "
    "the connection",
    "transfer-encoding": "frames the body (RFC 9112 6.1); the client frames it, and a coding "
    "the body does not have lets the target or a proxy read a second request from it",
    "connection": f"{_HOP_BY_HOP}; it can also make proxies drop other headers",
    "keep-alive": _HOP_BY_HOP,
    "proxy-connection": _HOP_BY_HOP,
    "te": f"{_HOP_BY_HOP} (RFC 9110 10.1.4: transfer codings the client would accept and "
    "cannot decode)",
    "trailer": "announces trailer fields after a chunked body (RFC 9110 6.6.2), which the "
    "client never sends",
    "upgrade": "asks to switch protocols (RFC 9110 7.8), which the client cannot speak; "
    "through a proxy it smuggles requests (h2c)",
    "proxy-authorization": "is a credential for a proxy (RFC 9110 11.7.2); actions connect "
    "directly, so it would only hand the credential to the target",
}


def client_header_refusal(name: str) -> str | None:
    """Why a job may not set the request header `name` (any case), or None."""
    return CLIENT_HEADERS.get(name.lower())


def request_headers(value: Any, path: str) -> dict[str, str]:
    """Request headers an HTTP client can actually send: token names, and values without
    CR/LF (header injection) or other control characters, not starting with whitespace,
    that HTTP/1.1 can carry (Latin-1), and none of `CLIENT_HEADERS`. A header that could
    not be sent would otherwise fail every attempt of the job long after the PUT was
    accepted."""
    headers = readers.string_map(value, path)
    for name, item in headers.items():
        field = readers.join(path, name) if name else path
        if not _HEADER_NAME.match(name):
            raise ValidationError(field, "is not a valid HTTP header name")
        refusal = client_header_refusal(name)
        if refusal:
            raise ValidationError(field, f"{refusal}; remove it from the headers")
        if "\r" in item or "\n" in item:
            raise ValidationError(field, "must not contain CR or LF")
        if _CONTROL.search(item):
            raise ValidationError(field, "must not contain control characters")
        if item[:1].isspace():
            raise ValidationError(field, "must not start with whitespace")
        try:
            item.encode("latin-1")
        except UnicodeEncodeError:
            raise ValidationError(
                field, "holds characters an HTTP header cannot carry (only Latin-1)"
            ) from None
    return headers
