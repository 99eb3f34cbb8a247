"""Entity queries (`TableClient.query_entities`) sent as the SDK sends them, without its
generated client: each page one GET sent by `EntityRequests.send` (its pipeline and headers;
`store/entity_requests.py` says why), read with `entity_answer.entity_from_json`.

Every dispatch reads its shards' due rows by a query, and the coordinator counts each
shard's every minute: after the point requests, queries were the dispatcher's
costliest requests through the SDK. Paging is azure-core's public `ItemPaged`, with the
SDK's continuation token (a dict of the next PartitionKey and RowKey, from the
`x-ms-continuation-*` headers), so `store/paging.py`'s `$skiptoken`s stay as they were.
Filter parameters are substituted by the SDK's rules (`_parameter_filter_substitution`,
which is not public): a word `@name` of the filter becomes the value, quoted by its type;
but for the integers 0 and 1, which the SDK writes as `false` and `true` (it tests
`value in [True, False]`, which 0 and 1 equal), and which are numbers here.
tests/store/test_entity_queries.py compares both on every parameter type and on paging.
"""

from __future__ import annotations

import json
from binascii import hexlify
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlencode
from uuid import UUID

from azure.core.paging import ItemPaged
from azure.core.rest import HttpResponse

from scheduler_lib.store.changeset_answer import decode_error
from scheduler_lib.store.entity_answer import ReadEntity, entity_from_json
from scheduler_lib.store.entity_requests import MINIMAL as _MINIMAL
from scheduler_lib.store.entity_requests import EntityRequests

#: The continuation headers of a query's page, and the query parameters that ask for the next.
_NEXT = (("PartitionKey", "NextPartitionKey"), ("RowKey", "NextRowKey"))


class EntityQueries:
    """Queries of one storage account's tables, sent by `requests` (its pipeline and
    headers)."""

    def __init__(self, requests: EntityRequests) -> None:
        self._requests = requests
        self._base = requests.base

    def query(
        self,
        table: str,
        query_filter: str | None,
        *,
        parameters: Mapping[str, Any] | None = None,
        select: str | Iterable[str] | None = None,
        results_per_page: int | None = None,
    ) -> ItemPaged[ReadEntity]:
        """`TableClient.query_entities` (and `list_entities` without a filter): the entities,
        page by page, requested as they are iterated; errors raised then, as the SDK's."""
        params: dict[str, str] = {}
        if query_filter is not None:
            params["$filter"] = substitute(parameters, query_filter)
        if select is not None:
            params["$select"] = select if isinstance(select, str) else ",".join(select)
        if results_per_page is not None:
            params["$top"] = str(results_per_page)
        url = f"{self._base}/{quote(table, safe='')}()"

        def get_next(token: Mapping[str, Any] | None) -> HttpResponse:
            page = dict(params)
            for key, name in _NEXT:
                if token and token.get(key):
                    page[name] = token[key]
            return self._send(url, page)

        return ItemPaged(get_next, _page)

    def _send(self, url: str, params: dict[str, str]) -> HttpResponse:
        query = urlencode(params, quote_via=quote)  # azure-core would not quote the values
        return self._requests.send("GET", f"{url}?{query}", None, _MINIMAL)


def _page(answer: HttpResponse) -> tuple[dict[str, Any] | None, Iterator[ReadEntity]]:
    """One page's continuation token (None on the last) and entities."""
    if answer.status_code != 200:
        raise decode_error(answer)
    following = {key: answer.headers.get(f"x-ms-continuation-{name}") for key, name in _NEXT}
    token = following if following["PartitionKey"] else None
    return token, iter([entity_from_json(e) for e in json.loads(answer.content)["value"]])


def substitute(parameters: Mapping[str, Any] | None, query_filter: str) -> str:
    """`query_filter` with each word `@name` replaced by `parameters[name]` as OData writes
    it: booleans in lower case, numbers as they are (an integer wider than 32 bits with `L`),
    times as datetime'...Z', UUIDs as guid'...', bytes as X'hex', anything else as a quoted
    string ('' for each ')."""
    if not parameters:
        return query_filter
    words = query_filter.split(" ")
    for index, word in enumerate(words):
        if word[:1] == "@":
            words[index] = _literal(parameters[word[1:]])
    return " ".join(words)


def _literal(value: Any) -> str:
    if value is True or value is False:
        return str(value).lower()
    if isinstance(value, float):
        return str(value)
    if isinstance(value, int):
        return str(value) if value.bit_length() <= 32 else f"{value}L"
    if isinstance(value, datetime):
        return f"datetime'{value.astimezone(UTC).strftime('%Y-%m-%dT%H:%M:%S.%fZ')}'"
    if isinstance(value, UUID):
        return f"guid'{value}'"
    if isinstance(value, bytes):
        return f"X'{hexlify(value).decode()}'"
    return "'" + str(value).replace("'", "''") + "'"
