"""One OpenAPI document per API version: the 2016-03-01 one as it always was, and beside it
the 2026-12-01 one, whose schemas carry the extension properties of the catalog.

Both derive from one document of every route: a route of a newer version alone (its
`openapi_extra` is `since(version)`, e.g. `POST .../backfill`) is left out of the older
documents; the newer one adds each catalog entry to the schema of the object the entry's
`Location` names.
"""

from __future__ import annotations

import copy

from scheduler_lib.api.paths import PREFIX
from scheduler_lib.wire import extensions
from scheduler_lib.wire.shapes import JSONObject, as_list, as_object
from scheduler_lib.wire.versions import DEFAULT_VERSION, ApiVersion, Location

#: Where each version's document is served (the default one keeps FastAPI's URL).
DOCUMENT_PATHS = {
    ApiVersion.V2016_03_01: PREFIX + "/openapi.json",
    ApiVersion.V2026_12_01: PREFIX + "/openapi-2026-12-01.json",
}
#: The component schemas of each location's object; an action's properties that apply
#: to errorActions go into `JobErrorAction` too.
_SCHEMAS: dict[Location, tuple[str, ...]] = {
    Location.JOB: ("JobProperties",),
    Location.ACTION: ("JobAction",),
    Location.REQUEST: ("HttpRequest",),
    Location.AUTHENTICATION: ("HttpAuthentication",),
    Location.RETRY_POLICY: ("RetryPolicy",),
    Location.QUEUE_MESSAGE: ("StorageQueueMessage",),
    Location.RECURRENCE: ("JobRecurrence",),
    Location.JOB_STATUS: ("JobStatus",),
    Location.COLLECTION: ("JobCollectionProperties",),
}


def versioned_document(base: JSONObject, version: ApiVersion) -> JSONObject:
    """The OpenAPI document of `version`, from the 2016-03-01 document `base`."""
    if version == DEFAULT_VERSION:
        return _without_newer_routes(base, version)
    document = _without_newer_routes(copy.deepcopy(base), version)
    info = as_object(document["info"])
    info["version"] = version.value
    info["description"] = (
        f"The Azure Scheduler 2016-03-01 REST API with this scheduler's extensions, as "
        f"api-version={version.value} (see docs/extensions.md). {info.get('description', '')}"
    )
    schemas = _object_at(document, "components", "schemas")
    for location in Location:
        for prop in extensions.properties_at(location, version):
            for name in _schemas_of(location, with_error_action=prop.error_action):
                properties = as_object(schemas[name]).setdefault("properties", {})
                as_object(properties)[prop.name] = prop.schema
    for status in extensions.statuses(version):
        status_properties = _object_at(schemas, "JobStatus", "properties")
        status_properties[status.name] = {**status.schema, "readOnly": True}
    for choice in extensions.all_choices():
        if version.has(choice.since):
            for name in _schemas_of(choice.location, with_error_action=True):
                field = _object_at(schemas, name, "properties", choice.field)
                field["enum"] = [*as_list(field["enum"]), choice.value]
    # History entries of a job's overlap policy (`wire/overlap.py`; both versions answer them).
    execution_status = _object_at(schemas, "JobExecutionStatus")
    execution_status["enum"] = [*as_list(execution_status["enum"]), "Skipped"]
    _describe_version_parameter(document, version)
    return document


#: An operation's key naming the version that introduced it (a route of a newer version
#: alone, e.g. `POST .../backfill`): left out of the documents of older versions.
SINCE = "x-scheduler-since"


def since(version: ApiVersion) -> JSONObject:
    """`openapi_extra` of a route that only `version` (and later) has."""
    return {SINCE: version.value}


def _without_newer_routes(document: JSONObject, version: ApiVersion) -> JSONObject:
    """`document` without the operations `version` lacks (a shallow copy when some go)."""
    paths = as_object(document.get("paths"))
    kept: JSONObject = {}
    for path, operations in paths.items():
        mine: JSONObject = {
            method: operation
            for method, operation in as_object(operations).items()
            if not isinstance(operation, dict)
            or version.has(ApiVersion(str(operation.get(SINCE, DEFAULT_VERSION.value))))
        }
        if mine:
            kept[path] = mine
    if kept == paths:
        return document
    return {**document, "paths": kept}


def _schemas_of(location: Location, *, with_error_action: bool) -> tuple[str, ...]:
    names = _SCHEMAS[location]
    if location == Location.ACTION and with_error_action:
        return (*names, "JobErrorAction")
    return names


def _object_at(node: JSONObject, *keys: str) -> JSONObject:
    """The object at `keys` under `node` (an OpenAPI document's part that FastAPI and
    schemas.json always have: a KeyError if not, as before)."""
    for key in keys:
        found = node[key]
        if not isinstance(found, dict):
            raise KeyError(key)
        node = found
    return node


def _describe_version_parameter(document: JSONObject, version: ApiVersion) -> None:
    """Each operation's `api-version` parameter names the version this document is of."""
    for path in as_object(document.get("paths")).values():
        for operation in as_object(path).values():
            for parameter in as_list(as_object(operation).get("parameters")):
                if isinstance(parameter, dict) and parameter.get("name") == "api-version":
                    parameter["description"] = (
                        f"{version.value} for the extensions; 2016-03-01 (or none) for the "
                        "Azure Scheduler API alone"
                    )
