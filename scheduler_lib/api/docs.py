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

from scheduler_lib.wire.shapes import JSONObject, as_object

API_VERSION_QUERY = Annotated[
    str | None,
    Query(alias="api-version", description="2016-03-01 (optional; the SDK always sends it)"),
]

_DESCRIPTIONS = {
    200: "OK",
    201: "Created",
    202: "Accepted: queued for the executor",
    400: "Bad input; `error.target` names the field",
    401: "Missing or wrong `Authorization: Bearer <key>`",
    404: "No such job collection or job",
    409: "Quota exceeded, or the job is Completed/Faulted",
    412: "`If-Match` does not match the current ETag",
}


def responses(*codes: int, schema: str | None = None) -> dict[int | str, JSONObject]:
    """Response documentation: the given codes, plus 401 and the ARM error body."""
    result: dict[int | str, JSONObject] = {}
    for code in sorted({*codes, 401, 400}):
        entry: JSONObject = {"description": _DESCRIPTIONS[code]}
        if code >= 400:
            entry["content"] = {"application/json": {"schema": _ref("ErrorResponse")}}
        elif schema:
            entry["content"] = {"application/json": {"schema": _ref(schema)}}
        result[code] = entry
    return result


def operation(
    operation_id: str,
    summary: str,
    codes: tuple[int, ...],
    schema: str | None = None,
    *,
    body: bool = False,
    description: str | None = None,
) -> dict[str, Any]:
    """A route's documentation, as its decorator's keyword arguments: the 2016-03-01 spec's
    operationId, a summary, the response codes (with `schema` for a success, see
    `responses`), and with `body` a JSON request body of that same definition (`body_doc`).
    One call keeps all a route declares on its decorator in two lines."""
    documented: dict[str, Any] = {
        "operation_id": operation_id,
        "summary": summary,
        "responses": responses(*codes, schema=schema),
    }
    if description is not None:
        documented["description"] = description
    if body and schema is not None:
        documented["openapi_extra"] = body_doc(schema)
    return documented


def body_doc(schema: str) -> JSONObject:
    """`openapi_extra` documenting a JSON request body of the named definition."""
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": _ref(schema)}},
        }
    }


def _ref(name: str) -> JSONObject:
    return {"$ref": f"#/components/schemas/{name}"}


@cache
def schemas() -> JSONObject:
    """The official definitions, as OpenAPI 3 component schemas."""
    return json.loads((Path(__file__).with_name("schemas.json")).read_text())


#: What FastAPI adds for its own request validation: a 422 answer with these two schemas. The
#: API never answers 422 (its handler turns a rejected parameter into an ARM 400, documented
#: on every operation), so they would only mislead a reader and a generated client.
_FRAMEWORK_SCHEMAS = ("HTTPValidationError", "ValidationError")


def without_framework_errors(document: JSONObject) -> JSONObject:
    """`document` without FastAPI's 422 responses and their schemas."""
    for path in as_object(document.get("paths")).values():
        for operation in as_object(path).values():
            as_object(as_object(operation).get("responses")).pop("422", None)
    component_schemas = as_object(as_object(document.get("components")).get("schemas"))
    for name in _FRAMEWORK_SCHEMAS:
        component_schemas.pop(name, None)
    return document
