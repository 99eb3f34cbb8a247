"""HTTP action request headers on the wire: only what an HTTP client can actually send."""

from __future__ import annotations

import re
from typing import Any

from scheduler_lib.errors import ValidationError
from scheduler_lib.model import wire

#: An HTTP header name is a token (RFC 9110 5.1): visible ASCII except separators.
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
#: Control characters a header value may not hold (RFC 9110 5.5; a tab is allowed).
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def request_headers(value: Any, path: str) -> dict[str, str]:
    """Request headers an HTTP client can actually send: token names, and values without
    CR/LF (header injection) or other control characters, not starting with whitespace,
    that HTTP/1.1 can carry (Latin-1). A header that could not be sent would otherwise
    fail every attempt of the job long after the PUT was accepted."""
    headers = wire.string_map(value, path)
    for name, item in headers.items():
        field = wire.join(path, name) if name else path
        if not _HEADER_NAME.match(name):
            raise ValidationError(field, "is not a valid HTTP header name")
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
