"""The status line and header block of a storage answer, read without the `email` package.

`http.client` reads every response's header block through `email.parser` into an
`email.message.Message` (`http.client.parse_headers`): after the storage requests left the
SDKs' generated clients (docs/cost.md, eighth step), that was ~40 % of the Python calls of a
point read or a queue send. `HeadResponse` is `http.client.HTTPResponse` with its `begin`
(the one method that reads the head) reading the lines itself, under the same limits
(`_MAXLINE` characters a line, `_MAXHEADERS` lines), decoding them as ISO-8859-1 as
`parse_headers` does, and deciding the body's framing (chunked, a Content-Length, none for
HEAD, 1xx, 204 and 304, else until the connection closes) and whether the connection stays
open by the same rules; the status line (`_read_status`), the connection's rule
(`_check_close`) and the body are `HTTPResponse`'s own, and tests/test_response_head.py
compares the two classes on every framing and malformed head. `Head` answers what
`HTTPResponse` and `storage_transport` ask of the headers (`get`, `get_all`, `items`).
`storage_transport.PoolTransport`'s connections make their responses with it.
"""

from __future__ import annotations

import http.client
from typing import Any

#: http.client's own limits on a header line's length and on the number of header lines.
MAX_LINE = 65536
MAX_HEADERS = 100


class Head:
    """A response's header fields in their order, looked up by name in any case."""

    __slots__ = ("_by_name", "_fields")

    def __init__(self, fields: list[tuple[str, str]]) -> None:
        self._fields = fields
        self._by_name: dict[str, list[str]] = {}
        for name, value in fields:
            self._by_name.setdefault(name.lower(), []).append(value)

    def get_all(self, name: str, default: Any = None) -> Any:
        return self._by_name.get(name.lower()) or default

    def get(self, name: str, default: Any = None) -> Any:
        found = self.get_all(name)
        return found[0] if found else default

    def items(self) -> list[tuple[str, str]]:
        return list(self._fields)

    def __iter__(self) -> Any:
        return iter([field for field, _ in self._fields])


class HeadResponse(http.client.HTTPResponse):
    """`http.client.HTTPResponse` whose head is read without the `email` package."""

    def begin(self) -> None:
        if self.headers is not None:
            return  # already begun
        while True:
            version, status, reason = self._read_status()
            if status != http.client.CONTINUE:
                break
            _read_lines(self.fp)  # a 100 Continue's headers, skipped
        self.code = self.status = status
        self.reason = reason.strip()
        if version in ("HTTP/1.0", "HTTP/0.9"):
            self.version = 10
        elif version.startswith("HTTP/1."):
            self.version = 11
        else:
            raise http.client.UnknownProtocol(version)
        self.headers = self.msg = Head(_fields(_read_lines(self.fp)))
        encoding = self.headers.get("transfer-encoding")
        self.chunked = bool(encoding and encoding.lower() == "chunked")
        self.chunk_left = None
        self.will_close = self._check_close()
        self.length = None
        length = self.headers.get("content-length")
        if length and not self.chunked:
            try:
                self.length = int(length)
            except ValueError:
                self.length = None
            if self.length is not None and self.length < 0:
                self.length = None
        bodiless = status in (http.client.NO_CONTENT, http.client.NOT_MODIFIED)
        if bodiless or 100 <= status < 200 or self._method == "HEAD":
            self.length = 0
        if not self.will_close and not self.chunked and self.length is None:
            self.will_close = True


def _read_lines(fp: Any) -> list[bytes]:
    lines: list[bytes] = []
    while True:
        line = fp.readline(MAX_LINE + 1)
        if len(line) > MAX_LINE:
            raise http.client.LineTooLong("header line")
        if line in (b"\r\n", b"\n", b""):
            return lines
        lines.append(line)
        if len(lines) > MAX_HEADERS:
            raise http.client.HTTPException(f"got more than {MAX_HEADERS} headers")


def _fields(lines: list[bytes]) -> list[tuple[str, str]]:
    """`name: value` lines as (name, value): the value without its leading blanks, a
    folded line (starting with a space or a tab) joined to the field before it by its line
    break, as the `email` parser (compat32) reads them."""
    fields: list[tuple[str, str]] = []
    for raw in lines:
        line = raw.decode("iso-8859-1").rstrip("\r\n")
        if line[:1] in (" ", "\t") and fields:
            name, value = fields[-1]
            fields[-1] = (name, f"{value}\r\n{line}")
            continue
        name, colon, value = line.partition(":")
        if colon:
            fields.append((name, value.lstrip(" \t")))
    return fields
