"""An entity as the Table service answers a point read, made into the `TableEntity`
azure-data-tables' `get_entity` returns for it (`store/entity_requests.py` says why the
read does not go through the SDK's generated client).

The rules are the SDK's (`_convert_to_entity`, which is not public): `PartitionKey` and
`RowKey` kept, `Timestamp` and the `odata.*` annotations moved into `metadata` (`etag`,
`timestamp`), each property typed by its `@odata.type` annotation or else by its JSON
type: strings and 32-bit integers as they are, a larger integer or an `Edm.Int64` as an
`EntityProperty(value, EdmType.INT64)`, `Edm.DateTime` as a UTC `datetime` that remembers
the service's own text (`tables_service_value`, written back unchanged: 7 decimals),
`Edm.Binary` as bytes, `Edm.Guid` as a UUID, `Edm.Double` as a float.
tests/store/test_entity_requests.py compares the two on every type and fails if a new SDK
reads any of them differently.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote
from uuid import UUID

from azure.data.tables import EdmType, EntityMetadata, EntityProperty, TableEntity


class StoredDatetime(datetime):
    """A DateTime property as read: a UTC datetime (to the microsecond), and the service's
    own text of it, which `changeset_body.entity_json` writes back as it came."""

    tables_service_value: str = ""


class ReadEntity(TableEntity):
    """`TableEntity` with the metadata of the read that returned it."""

    def __init__(self, properties: dict[str, Any], metadata: EntityMetadata) -> None:
        super().__init__(properties)
        self._read_metadata = metadata

    @property
    def metadata(self) -> EntityMetadata:
        return self._read_metadata


def entity_from_json(answer: Mapping[str, Any]) -> ReadEntity:
    """The entity of a point read's JSON answer (minimal metadata)."""
    properties: dict[str, Any] = {}
    types: dict[str, str] = {}
    odata: dict[str, Any] = {}
    for name, value in answer.items():
        if name.startswith("odata."):
            odata[name[6:]] = value
        elif name.endswith("@odata.type"):
            types[name[:-11]] = value
        else:
            properties[name] = value
    timestamp = properties.pop("Timestamp", None)
    entity = {name: _value(value, types.get(name)) for name, value in properties.items()}
    etag = odata.get("etag")
    if timestamp:
        etag = etag or "W/\"datetime'" + quote(timestamp) + "'\""
        timestamp = stored_datetime(timestamp)
    return ReadEntity(entity, {"etag": etag, "timestamp": timestamp})


def _value(value: Any, edm: str | None) -> Any:
    if edm is None:
        if type(value) is int and not -(2**31) <= value < 2**31:
            return EntityProperty(value, EdmType.INT64)
        return value  # a string, a 32-bit integer, a boolean, a float, null
    if edm == EdmType.STRING or edm == EdmType.INT32:
        return value
    if edm == EdmType.INT64:
        return EntityProperty(int(value), EdmType.INT64)
    if edm == EdmType.DATETIME:
        return stored_datetime(value)
    if edm == EdmType.BINARY:
        return base64.b64decode(value)
    if edm == EdmType.GUID:
        return UUID(value)
    if edm == EdmType.DOUBLE:
        return float(value)
    # A type the SDK does not convert (the service annotates none other): its holder, in
    # the SDK's own argument order.
    return EntityProperty(edm, value)


def stored_datetime(text: str) -> StoredDatetime:
    """The service's ISO text of a time (up to 7 decimals: .NET's ticks) as a UTC datetime
    to the microsecond, keeping the text."""
    whole, dot, fraction = text.removesuffix("Z").partition(".")
    # `fromisoformat`, not `strptime` (a fifth of its CPU, on every time of every entity
    # read), held to the one form the service sends: no offset, no other separators.
    parsed = StoredDatetime.fromisoformat(whole)
    if len(whole) != len("2026-01-01T00:00:00") or whole[10] != "T" or parsed.tzinfo:
        raise ValueError(f"not a time as the Table service writes one: {text!r}")
    parsed = parsed.replace(
        microsecond=int((fraction[:6] if dot else "0").ljust(6, "0")), tzinfo=UTC
    )
    parsed.tables_service_value = text
    return parsed
