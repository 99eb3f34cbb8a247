"""The bytes of an entity-group transaction: the OData batch request Azure Tables reads
(one changeset of HTTP requests in a multipart/mixed body) and its multipart answer.

azure-data-tables builds this body with azure-core's `set_multipart_mixed`, which encodes
it through the `email` package's generator and reads the answer back with the `email`
parser and `http.client` for each part: ~60 % of a transaction's Python calls, with new
regexes compiled for each transaction's unique boundaries (docs/cost.md). The format is
fixed (Microsoft's "Performing entity group transactions"), so it is written and read here
with string operations; `store/changeset.py` sends it.

Entities are serialized exactly as the SDK's serializer writes them (`_add_entity_properties`
in azure-data-tables, which is not public): every property typed by its Python type, an
`@odata.type` annotation beside each string, Int64, Double, DateTime, Guid and Binary value,
none beside Int32 and Boolean, None values left out; an `EntityProperty` (value, EdmType)
always annotated. tests/store/test_changeset.py compares the two on every type and fails if
a new SDK writes any of them differently.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from math import isnan
from typing import Any
from urllib.parse import quote
from uuid import UUID

from azure.core import MatchConditions
from azure.data.tables import EdmType, TableEntity, UpdateMode

#: The headers every request of the changeset carries (the SDK's request builders' own).
_VERSIONS = "x-ms-version: 2019-02-02\r\nDataServiceVersion: 3.0\r\n"
_JSON = "application/json"
_MINIMAL = "application/json;odata=minimalmetadata"


def entity_json(source: Mapping[str, Any]) -> str:
    """`source` as the JSON body the SDK sends for it."""
    properties: dict[str, Any] = {}
    edm: EdmType | None
    for name, value in source.items():
        if value is None:
            continue
        if isinstance(value, tuple):  # EntityProperty(value, edm_type), or a plain pair
            if value[0] is None:
                continue
            edm, value = _typed(value[0], EdmType(value[1]))
        else:
            edm, value = _untyped(value)
        properties[name] = value
        if edm is not None:
            properties[name + "@odata.type"] = edm.value
    return json.dumps(properties)


def _untyped(value: Any) -> tuple[EdmType | None, Any]:
    """A value's EDM type and JSON value by its Python type (the SDK looks up exact types:
    a subclass of int other than bool is refused, as there)."""
    kind = type(value)
    if isinstance(value, Enum):
        return EdmType.STRING, str(value)
    if isinstance(value, datetime):
        return EdmType.DATETIME, _datetime(value)
    if kind is str:
        return EdmType.STRING, value
    if kind is bool:
        return None, value
    if kind is int:
        return None, _int32(value)
    if kind is float:
        return EdmType.DOUBLE, _double(value)
    if kind is UUID:
        return EdmType.GUID, str(value)
    if kind is bytes:
        return EdmType.BINARY, base64.b64encode(value).decode("utf-8")
    raise TypeError(f"Type not supported when sending data to the service: {kind}.")


def _typed(value: Any, edm: EdmType) -> tuple[EdmType, Any]:
    """A value given with its EDM type: always annotated, as the SDK does."""
    if edm is EdmType.BINARY:
        data = value.encode("utf-8") if isinstance(value, str) else value
        return edm, base64.b64encode(data).decode("utf-8")
    if edm is EdmType.DATETIME:
        return edm, value if isinstance(value, str) else _datetime(value)
    if edm is EdmType.DOUBLE:
        return edm, value if isinstance(value, str) else _double(value)
    if edm is EdmType.INT32:
        return edm, _int32(value)
    if edm is EdmType.INT64:
        if not -(2**63) <= int(value) < 2**63:
            raise TypeError(f"{value} is too large to be cast to type {EdmType.INT64}.")
        return edm, str(value)
    if edm is EdmType.BOOLEAN:
        return edm, value
    return edm, str(value)  # GUID, STRING


def _datetime(value: datetime) -> str:
    """A time as the service wrote it when read back from it, else in UTC to the microsecond
    (a naive time is taken as local time, as `astimezone` and the SDK take it)."""
    stored = getattr(value, "tables_service_value", None)
    if stored:
        return str(stored)
    utc = value.astimezone(UTC)
    try:
        return utc.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    except ValueError:
        return utc.strftime("%Y-%m-%dT%H:%M:%SZ")


def _double(value: float) -> Any:
    if isnan(value):
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def _int32(value: Any) -> int:
    number = int(value)
    if not -(2**31) <= number < 2**31:
        raise TypeError(f"{value} is too large to be cast to type {EdmType.INT32}.")
    return number


@dataclass(frozen=True)
class OperationRequest:
    """The HTTP request of one entity operation, as the SDK sends it: alone
    (`store/entity_requests.py`) or as one part of a changeset (`operation_part`)."""

    method: str
    url: str
    body: str | None
    accept: str  # the Accept header's value
    if_match: str | None


def operation_request(base: str, table: str, operation: tuple[Any, ...]) -> OperationRequest:
    """One operation tuple of `TableClient.submit_transaction` (("create", entity),
    ("update", entity, {"mode": ..., "etag": ..., "match_condition": ...}), ...) as the
    HTTP request the SDK makes for it (`base` is scheme://host[/account]). ValueError,
    TypeError for what the SDK refuses."""
    if len(operation) == 3:
        kind, entity, given = operation
    else:
        (kind, entity), given = operation, {}
    options = dict(given)
    if "PartitionKey" not in entity or "RowKey" not in entity:
        raise ValueError("PartitionKey and/or RowKey were not provided in entity")
    kind = str(getattr(kind, "value", kind)).lower()
    mode = options.pop("mode", UpdateMode.MERGE)
    if kind == "create":
        target = f"{base}/{_quoted(table)}"
        request = OperationRequest("POST", target, entity_json(entity), _MINIMAL, None)
    elif kind in ("upsert", "update"):
        match = _if_match(entity, options) if kind == "update" else None
        url = entity_url(base, table, entity["PartitionKey"], entity["RowKey"])
        request = OperationRequest(_verb(mode), url, entity_json(entity), _JSON, match)
    elif kind == "delete":
        url = entity_url(base, table, entity["PartitionKey"], entity["RowKey"])
        request = OperationRequest("DELETE", url, None, _MINIMAL, _if_match(entity, options))
    else:
        raise ValueError(f"Unrecognized operation: {kind}")
    if options:
        raise TypeError(f"Unexpected keyword arguments for {kind}: {sorted(options)}")
    return request


def entity_url(base: str, table: str, partition_key: Any, row_key: Any) -> str:
    """The address of one entity of `table` (keys quoted as the SDK does)."""
    keys = f"PartitionKey='{_key(partition_key)}',RowKey='{_key(row_key)}'"
    return f"{base}/{_quoted(table)}({keys})"


def operation_part(base: str, table: str, operation: tuple[Any, ...], index: int) -> str:
    """One operation tuple as its changeset part (`operation_request`'s request as text)."""
    request = operation_request(base, table, operation)
    head = (
        "Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n"
        f"Content-ID: {index}\r\n\r\n{request.method} {request.url} HTTP/1.1\r\n"
    )
    if request.body is not None:
        size = len(request.body.encode("utf-8"))
        head += f"Content-Type: application/json\r\nContent-Length: {size}\r\n"
    head += f"{_VERSIONS}Accept: {request.accept}\r\n"
    if request.if_match is not None:
        head += f"If-Match: {request.if_match}\r\n"
    return f"{head}\r\n{request.body or ''}"


def _verb(mode: Any) -> str:
    if mode == UpdateMode.REPLACE:
        return "PUT"
    if mode == UpdateMode.MERGE:
        return "PATCH"
    raise ValueError(f"Mode type '{mode}' is not supported.")


def _if_match(entity: Mapping[str, Any], options: dict[str, Any]) -> str:
    """The If-Match header for an update or a delete, by the SDK's rules: an ETag only with
    `IfNotModified` (the entity's own, when it was read), otherwise `*`."""
    etag = options.pop("etag", None)
    condition = options.pop("match_condition", None)
    if condition and not etag and isinstance(entity, TableEntity):
        etag = entity.metadata.get("etag")
    condition = condition or MatchConditions.Unconditionally
    if condition == MatchConditions.IfNotModified:
        if not etag:
            raise ValueError("IfNotModified must be specified with etag.")
        return str(etag)
    if condition == MatchConditions.Unconditionally:
        if etag:
            raise ValueError("Etag is not supported for an Unconditional operation.")
        return "*"
    raise ValueError(f"Unsupported match condition: {condition}")


def _key(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("PartitionKey or RowKey must be of type string.")
    return _quoted(value.replace("'", "''"))


def _quoted(value: str) -> str:
    return quote(value, safe="")


def batch_body(batch: str, changeset: str, parts: list[str]) -> bytes:
    """The request's body: one batch part holding the changeset of `parts`."""
    inner = "".join(f"--{changeset}\r\n{part}\r\n" for part in parts)
    return (
        f"--{batch}\r\nContent-Type: multipart/mixed; boundary={changeset}\r\n\r\n"
        f"{inner}--{changeset}--\r\n\r\n--{batch}--\r\n"
    ).encode()
