"""Paging over the store's pages: `$top`, `$skip` and an absolute, self-contained nextLink.

The store hands out pages of whatever size is asked and an opaque continuation token at
each page boundary. To honour `$skip` and `$top` exactly, a page here asks the store for
exactly the rows it still needs, so it never reads past what it returns, and it reads one
row more than `$top` to know whether a next page exists (no nextLink to an empty page).
The position of that extra row, (store token, offset into that store page), is the
`$skiptoken` of the nextLink, which also repeats `$top`, `$filter` and `api-version`, so
the SDK can follow it as is.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlencode

from fastapi import Request

from scheduler_lib.api.requests import api_version
from scheduler_lib.errors import ValidationError
from scheduler_lib.wire.dialect import list_body
from scheduler_lib.wire.shapes import Item, ListPage

T = TypeVar("T")
#: fetch(page_size, store_token) -> (rows, next store token or None)
Fetch = Callable[[int, str | None], tuple[list[T], str | None]]
MAX_STORE_PAGE = 1000


def encode_position(store_token: str | None, offset: int) -> str:
    raw = json.dumps({"t": store_token, "o": offset}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_position(token: str | None) -> tuple[str | None, int]:
    if not token:
        return None, 0
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data = json.loads(raw)
        store_token, offset = data["t"], data["o"]
        if not (store_token is None or isinstance(store_token, str)) or not isinstance(offset, int):
            raise ValueError
        if offset < 0 or offset > MAX_STORE_PAGE:
            raise ValueError
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise ValidationError("$skiptoken", "is not a token this API issued") from None
    return store_token, offset


def read_page(
    fetch: Fetch[T], *, position: str | None, skip: int, top: int
) -> tuple[list[T], str | None]:
    """Rows `skip .. skip+top` from `position`, and the position after them (None at end)."""
    token, to_discard = decode_position(position)
    to_discard += skip
    want = top + 1
    rows: list[T] = []
    while True:
        need = to_discard + want - len(rows)
        size = min(need, MAX_STORE_PAGE)
        page, next_token = fetch(size, token)
        dropped = min(to_discard, len(page))
        to_discard -= dropped
        rows.extend(page[dropped:])
        if len(rows) >= want:
            # Only a page asked for exactly what was still needed can complete `want`,
            # so the extra row is the last row of this store page.
            return rows[:top], encode_position(token, len(page) - 1)
        if next_token is None:
            return rows, None
        token = next_token


def next_link(request: Request, position: str | None, **params: Any) -> str | None:
    """The absolute URL of the next page, or None."""
    if position is None:
        return None
    query = {"api-version": api_version(request).value}  # the version of this request
    query.update({k: str(v) for k, v in params.items() if v is not None})
    query["$skiptoken"] = position
    return str(request.url.replace(query=urlencode(query)))


def page_body(request: Request, items: list[Item], link: str | None) -> ListPage[Item]:
    """A page as the request's api-version writes it (`model.dialect.list_body`)."""
    return list_body(items, link, api_version(request))
