"""One page of a partition's entities, and the opaque paging token the API hands out for
the next (`$skiptoken`): the SDK's continuation token as URL-safe base64 of its JSON; a
token that does not decode is the caller's 400, not a 500."""

from __future__ import annotations

import base64
import json
from typing import Any

from azure.data.tables import TableClient

from scheduler_lib.errors import ValidationError
from scheduler_lib.store.entity import EntityValue
from scheduler_lib.store.tables import dumps


def query_page(
    table: TableClient,
    partition: str,
    *,
    equals: tuple[str, str] | None = None,
    page_size: int,
    continuation: str | None,
) -> tuple[list[Any], str | None]:
    """One page of a partition's entities (optionally where property `equals[0]` has the
    value `equals[1]`), and the opaque token of the next page (None on the last)."""
    query = "PartitionKey eq @pk"
    parameters: dict[str, EntityValue] = {"pk": partition}
    if equals is not None:
        query += f" and {equals[0]} eq @value"
        parameters["value"] = equals[1]
    pages = table.query_entities(query, parameters=parameters, results_per_page=page_size).by_page(
        continuation_token=decode_token(continuation)
    )
    entities = list(next(pages, []))
    token = pages.continuation_token  # type: ignore[attr-defined]  # set by the pager, untyped
    return entities, encode_token(token)


def encode_token(token: Any) -> str | None:
    """An opaque, URL-safe paging token from the SDK's continuation token."""
    if not token:
        return None
    return base64.urlsafe_b64encode(dumps(token).encode()).decode().rstrip("=")


def decode_token(token: str | None) -> Any:
    """Inverse of `encode_token`; a token this API did not issue is a 400, not a 500."""
    if not token:
        return None
    padded = token + "=" * (-len(token) % 4)
    try:
        return json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (ValueError, UnicodeDecodeError):
        raise ValidationError("$skiptoken", "is not a token this API issued") from None
