"""OpenAPI documentation of the routes (served at /api/docs and /api/openapi.json).

The request and response schemas are the official 2016-03-01 definitions (`schemas.json`,
converted from Swagger 2.0 to OpenAPI 3 references), so the page documents exactly the
JSON names the SDK uses.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Annotated, Any

from fastapi import Query

API_VERSION_QUERY = Annotated[
    str | None,
    Query(alias="api-version", description="2016-03-01 (optional; the SDK always sends it)"),
]

_DESCRIPTIONS = {
    200: "OK",
    201: "Created",
    400: "Bad input; `error.target` names the field",
    401: "Missing or wrong `Authorization: Bearer <key>`",
    404: "No such job collection or job",
    409: "Quota exceeded, or the job is Completed/Faulted",
    412: "`If-Match` does not match the current ETag",
}


def responses(*codes: int, schema: str | None = None) -> dict[int | str, dict[str, Any]]:
    """Response documentation: the given codes, plus 401 and the ARM error body."""
    result: dict[int | str, dict[str, Any]] = {}
    for code in sorted({*codes, 401, 400}):
        entry: dict[str, Any] = {"description": _DESCRIPTIONS[code]}
        if code >= 400:
            entry["content"] = {"application/json": {"schema": _ref("ErrorResponse")}}
        elif schema:
            entry["content"] = {"application/json": {"schema": _ref(schema)}}
        result[code] = entry
    return result


def body_doc(schema: str) -> dict[str, Any]:
    """`openapi_extra` documenting a JSON request body of the named definition."""
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": _ref(schema)}},
        }
    }


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


@cache
def schemas() -> dict[str, Any]:
    """The official definitions, as OpenAPI 3 component schemas."""
    return json.loads((Path(__file__).with_name("schemas.json")).read_text())
