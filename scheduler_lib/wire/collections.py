"""Job collections: the request body into a record, the record into wire JSON.

Enabled, Disabled and Suspended can be requested (Azure Scheduler accepted Suspended, the
state its platform put a collection in, in a PUT or PATCH too); `Deleted` cannot. The SKU
defaults to Standard, the state to Enabled.
"""

from __future__ import annotations

from typing import Any

from scheduler_lib.domain import COLLECTION_STATES, USER_COLLECTION_STATES, CollectionRecord
from scheduler_lib.errors import ValidationError
from scheduler_lib.wire import arm, dialect, extensions, notifications, quotas, readers, signing
from scheduler_lib.wire.shapes import JSONObject, as_object
from scheduler_lib.wire.tags import resource_tags
from scheduler_lib.wire.versions import DEFAULT_VERSION, ApiVersion, Location

BODY_KEYS = ("id", "name", "type", "location", "tags", "properties")


def normalize_body(
    body: Any, version: ApiVersion = DEFAULT_VERSION
) -> tuple[str | None, dict[str, str] | None, JSONObject]:
    """(location, tags, properties) of a JobCollectionDefinition; absent parts are None or
    missing so a PATCH can tell "not given" from "given". `version` decides which extension
    properties are known (`extensions`)."""
    source = readers.keys(body, "", BODY_KEYS)
    location = None
    if source.get("location") is not None:
        location = readers.string(source["location"], "location", max_length=100)
    tags = None
    if source.get("tags") is not None:
        tags = resource_tags(source["tags"])
    properties: JSONObject = {}
    if source.get("properties") is not None:
        properties = _properties(source["properties"], version)
    return location, tags, properties


def _properties(value: Any, version: ApiVersion) -> JSONObject:
    known = ("sku", "state", "quota", *extensions.names(Location.COLLECTION, version))
    source = readers.keys(value, "properties", known)
    properties: JSONObject = {}
    if source.get("sku") is not None:
        sku = readers.keys(source["sku"], "properties.sku", ("name",))
        if sku.get("name") is None:
            raise ValidationError("properties.sku.name", "is required")
        properties["sku"] = {"name": readers.enum(sku["name"], "properties.sku.name", quotas.SKUS)}
    if source.get("state") is not None:
        state = readers.enum(source["state"], "properties.state", COLLECTION_STATES)
        if state not in USER_COLLECTION_STATES:
            raise ValidationError(
                "properties.state", "only Enabled, Disabled or Suspended can be requested"
            )
        properties["state"] = state
    if source.get("quota") is not None:
        properties["quota"] = _quota(source["quota"])
    properties.update(extensions.read(Location.COLLECTION, source, "properties", version))
    return properties


def _quota(value: Any) -> JSONObject:
    path = "properties.quota"
    source = readers.keys(value, path, ("maxJobCount", "maxJobOccurrence", "maxRecurrence"))
    quota: JSONObject = {}
    for name in ("maxJobCount", "maxJobOccurrence"):
        if source.get(name) is not None:
            quota[name] = readers.integer(source[name], f"{path}.{name}", low=1, high=1_000_000)
    if source.get("maxRecurrence") is not None:
        where = f"{path}.maxRecurrence"
        recurrence = readers.keys(source["maxRecurrence"], where, ("frequency", "interval"))
        if recurrence.get("frequency") is None:
            raise ValidationError(f"{where}.frequency", "is required")
        quota["maxRecurrence"] = {
            "frequency": readers.enum(
                recurrence["frequency"], f"{where}.frequency", quotas.MAX_RECURRENCE_FREQUENCIES
            ),
            "interval": readers.integer(
                recurrence.get("interval", 1), f"{where}.interval", low=1, high=1000
            ),
        }
    return quota


def complete(properties: JSONObject) -> JSONObject:
    """Stored collection properties with defaults, checked against the SKU."""
    result: JSONObject = {
        "sku": properties.get("sku") or {"name": "Standard"},
        "state": properties.get("state", "Enabled"),
    }
    if properties.get("quota"):
        result["quota"] = properties["quota"]
    # Extension properties: only a request of a version that has them can have put them
    # here (a PUT of an older version drops them; its PATCH keeps the stored ones).
    result.update({k: properties[k] for k in extensions.collection_names() if k in properties})
    sku = as_object(result["sku"]).get("name")
    quotas.check_collection_quota(str(sku), as_object(result.get("quota")))
    return result


def merge(stored: JSONObject, patch: JSONObject) -> JSONObject:
    """A PATCH's properties over the stored ones (quota merged field by field)."""
    result = {**stored, **{k: v for k, v in patch.items() if k != "quota"}}
    if "quota" in patch:
        result["quota"] = {**as_object(stored.get("quota")), **as_object(patch["quota"])}
    return result


def collection_to_wire(
    record: CollectionRecord, version: ApiVersion = DEFAULT_VERSION
) -> JSONObject:
    """A JobCollectionDefinition with the extension properties `version` has, written as
    `version` writes it (`dialect`)."""
    body: JSONObject = {
        "id": arm.collection_id(record.subscription_id, record.resource_group, record.name),
        "type": arm.COLLECTION_TYPE,
        "name": record.name,
    }
    if record.location:
        body["location"] = record.location
    body["tags"] = dict(record.tags)
    properties = notifications.redact(signing.redact(record.properties))  # write-only
    body["properties"] = extensions.collection_older_form(properties, version)
    return dialect.collection_body(body, version)
