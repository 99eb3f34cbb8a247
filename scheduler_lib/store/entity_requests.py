"""Point requests on one entity (read, create, replace or merge, upsert, delete) sent as
the SDK sends them, without its generated client (issue 22, docs/cost.md "Point requests
without the generated client").

Why: every occurrence reads and writes its job, claims it, finishes it, and the
dispatcher reads and advances it: point requests are most of an occurrence's storage
requests, and through azure-data-tables each cost ~1.2 ms of client CPU, where the same
request through `Changesets`' pipeline costs ~0.55 ms (bench/request_floor.py). What the
SDK spends the rest on is its generated operation layer (request builders, the serializer,
header deserialization, error maps) and the policies a request needs none of.

`EntityRequests` sends through the `Changesets` pipeline (`store/changeset.py`): public
azure-core policies, the same connections, credential (SharedKey signed on each try, or a
token), retries and timeouts as the store's TableClients, a tracing span (a tracer
configured) and azure-core's HTTP log line (its logger at INFO) per try
(`store/storage_pipeline.py`). Requests are those the SDK makes (`changeset_body.
operation_request`: verb, address, body, Accept, If-Match); answers are read as the SDK
reads them (`entity_answer.entity_from_json`), errors are the SDK's types
(`changeset_answer.decode_error`: ResourceNotFoundError, ResourceExistsError,
ResourceModifiedError, ClientAuthenticationError, HttpResponseError with its status code),
and a delete of an entity that is not there succeeds, as in the SDK. A create asks for no
content back (`Prefer: return-no-content`): nothing here reads it.
`store/table_client.StoreTableClient` routes its five point methods here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import quote

from azure.core.rest import HttpRequest, HttpResponse

from scheduler_lib.store.changeset import Changesets
from scheduler_lib.store.changeset_answer import decode_error
from scheduler_lib.store.changeset_body import entity_url, operation_request
from scheduler_lib.store.entity_answer import ReadEntity, entity_from_json

#: The Accept header of a read: entities with the annotations the SDK reads them by.
MINIMAL = "application/json;odata=minimalmetadata"


class EntityRequests:
    """Point requests to one storage account's Table service, on `changesets`' pipeline."""

    def __init__(self, changesets: Changesets) -> None:
        self._pipeline = changesets.pipeline
        self.base = changesets.base
        self._version = changesets.version

    def get(
        self, table: str, partition_key: str, row_key: str, select: str | Iterable[str] | None
    ) -> ReadEntity:
        """`TableClient.get_entity`: the entity, or ResourceNotFoundError."""
        url = entity_url(self.base, table, partition_key, row_key)
        if select is not None:
            url += "?$select=" + quote(_select(select))
        answer = self.send("GET", url, None, MINIMAL)
        if answer.status_code != 200:
            raise decode_error(answer)
        return entity_from_json(json.loads(answer.content))

    def write(
        self, table: str, kind: str, entity: Mapping[str, Any], options: Mapping[str, Any]
    ) -> dict[str, Any]:
        """`create_entity` (`kind` "create"), `update_entity` ("update") or `upsert_entity`
        ("upsert") with the SDK's keywords (`mode`, `etag`, `match_condition`): the write's
        metadata (`etag`, `date`, `version`)."""
        request = operation_request(self.base, table, (kind, entity, options))
        answer = self.send(request.method, request.url, request.body, request.accept,
                            if_match=request.if_match, create=kind == "create")  # fmt: skip
        if not 200 <= answer.status_code < 300:
            raise decode_error(answer)
        return _metadata(answer)

    def delete(self, table: str, entity: Mapping[str, Any], options: Mapping[str, Any]) -> None:
        """`TableClient.delete_entity`: None, also when the entity was not there."""
        request = operation_request(self.base, table, ("delete", entity, options))
        answer = self.send("DELETE", request.url, None, request.accept,
                            if_match=request.if_match)  # fmt: skip
        if answer.status_code != 404 and not 200 <= answer.status_code < 300:
            raise decode_error(answer)

    def send(
        self,
        method: str,
        url: str,
        body: str | None,
        accept: str,
        *,
        if_match: str | None = None,
        create: bool = False,
    ) -> HttpResponse:
        headers = {"x-ms-version": self._version, "DataServiceVersion": "3.0", "Accept": accept}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if if_match is not None:
            headers["If-Match"] = if_match
        if create:
            headers["Prefer"] = "return-no-content"
        content = None if body is None else body.encode("utf-8")
        return self._pipeline.send_request(
            HttpRequest(method, url, headers=headers, content=content)
        )


def _select(select: str | Iterable[str]) -> str:
    return select if isinstance(select, str) else ",".join(select)


def _metadata(answer: HttpResponse) -> dict[str, Any]:
    """A write's metadata as the SDK gives it (its `_trim_service_metadata`)."""
    date = answer.headers.get("Date")
    return {
        "date": parsedate_to_datetime(date) if date else None,
        "etag": answer.headers.get("ETag"),
        "version": answer.headers.get("x-ms-version"),
    }
