"""Extension 6 (2026-12-01): a job collection's request-signing secrets (validated and kept
here; the signature is `actions/signing.py`'s).

`signingSecrets` is a list of at most two `{name, value}`: two so that a receiver can be
moved to a new secret while the old one still verifies (rotation). Values are Standard
Webhooks secrets, `whsec_<base64 of 24 to 64 random bytes>`; `"value": "generate"` asks the
server for one, returned once, in the answer of the request that made it. Otherwise a value
is write-only like every secret here: answers show `{name, createdTime}`, never the value.
An entry given with its `name` alone keeps the stored secret of that name, so rotating is
`[{"name": "old"}, {"name": "new", "value": "whsec_..."}]` and retiring the old one is
`[{"name": "new"}]`. Secrets live in the collection, never in a job's definition, so no job
can carry one elsewhere.
"""

from __future__ import annotations

import base64
import binascii
import re
import secrets
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from scheduler_lib.errors import ValidationError
from scheduler_lib.timeutil import iso_z
from scheduler_lib.wire import readers
from scheduler_lib.wire.shapes import JSON, JSONObject, as_list, as_object
from scheduler_lib.wire.versions import ExtensionProperty, Location

PROPERTY = "signingSecrets"
MAX_SECRETS = 2
PREFIX = "whsec_"
#: Standard Webhooks asks for 24 to 64 bytes of key.
MIN_KEY_BYTES, MAX_KEY_BYTES = 24, 64
GENERATE = "generate"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
SCHEMA: JSONObject = {
    "type": "array",
    "maxItems": MAX_SECRETS,
    "description": "Secrets that sign the collection's HTTP requests (Standard Webhooks "
    "headers). value is write-only: whsec_<base64>, or 'generate' (returned once); an entry "
    "with its name alone keeps the stored secret of that name.",
    "items": {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string", "pattern": _NAME.pattern},
            "value": {"type": "string", "writeOnly": True},
            "createdTime": {"type": "string", "format": "date-time", "readOnly": True},
        },
    },
}


def validate(value: Any, path: str) -> list[dict[str, str]]:
    """The entries as given: `{name}` or `{name, value}` (`createdTime` is read-only and
    ignored, so an answer can be sent back)."""
    if not isinstance(value, list):
        raise ValidationError(path, "must be a list of {name, value}")
    if len(value) > MAX_SECRETS:
        raise ValidationError(path, f"at most {MAX_SECRETS} secrets may be active (rotation)")
    entries: list[dict[str, str]] = []
    for index, item in enumerate(value):
        where = readers.join(path, index)
        source = readers.keys(item, where, ("name", "value", "createdTime"))
        if source.get("name") is None:
            raise ValidationError(readers.join(where, "name"), "is required")
        name = readers.string(source["name"], readers.join(where, "name"), max_length=64)
        if not _NAME.match(name):
            raise ValidationError(
                readers.join(where, "name"), "letters, digits, '-', '_' and '.', up to 64"
            )
        if any(entry["name"].lower() == name.lower() for entry in entries):
            raise ValidationError(readers.join(where, "name"), f"{name!r} is given twice")
        entry = {"name": name}
        if source.get("value") is not None:
            entry["value"] = read_secret(source["value"], readers.join(where, "value"))
        entries.append(entry)
    return entries


def carry_over(
    stored: Mapping[str, Any] | None, properties: JSONObject, now: datetime
) -> JSONObject:
    """Collection `properties` of a request with its secrets completed from `stored` (the
    collection's stored properties): an entry without a value keeps the stored one of its
    name, a generated value is made, `createdTime` says when each value was first stored."""
    if PROPERTY not in properties:
        return properties
    old = {entry["name"].lower(): entry for entry in (stored or {}).get(PROPERTY) or ()}
    result: list[JSON] = []
    for index, item in enumerate(as_list(properties[PROPERTY])):
        entry = as_object(item)  # validated: each {name, value?}
        name = str(entry.get("name"))
        prior = old.get(name.lower())
        value = entry.get("value")
        if value is None:
            if prior is None:
                raise ValidationError(
                    f"properties.{PROPERTY}[{index}].value",
                    f"is required: no stored secret is named {name!r}",
                )
            result.append({**prior, "name": name})
            continue
        if value == GENERATE:
            value = PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()
        same = prior is not None and prior["value"] == value
        created = prior["createdTime"] if same and prior else iso_z(now)
        result.append({"name": name, "value": value, "createdTime": created})
    completed: JSONObject = {**properties, PROPERTY: result}
    if not result:
        del completed[PROPERTY]
    return completed


def redact(properties: Mapping[str, Any]) -> dict[str, Any]:
    """Collection properties as answers show them: each secret without its value."""
    result = dict(properties)
    if PROPERTY in result:
        result[PROPERTY] = [
            {k: v for k, v in entry.items() if k != "value"} for entry in result[PROPERTY]
        ]
    return result


def generated(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, str]:
    """name -> value of the secrets `after` holds that were generated by this request (not in
    `before`, the request's own properties): shown once, in its answer."""
    asked = {
        entry["name"].lower()
        for entry in before.get(PROPERTY) or ()
        if entry.get("value") == GENERATE
    }
    return {
        entry["name"]: entry["value"]
        for entry in after.get(PROPERTY) or ()
        if entry["name"].lower() in asked
    }


def reveal(body: JSONObject, generated: Mapping[str, str]) -> JSONObject:
    """A collection's wire `body` with the values this request generated, shown this once."""
    for entry in as_list(as_object(body.get("properties")).get(PROPERTY)):
        name = entry.get("name") if isinstance(entry, dict) else None
        if isinstance(entry, dict) and isinstance(name, str) and name in generated:
            entry["value"] = generated[name]
    return body


def values(properties: Mapping[str, Any]) -> tuple[str, ...]:
    """The active secrets of a collection's stored properties (for signing)."""
    return tuple(entry["value"] for entry in properties.get(PROPERTY) or ())


def read_secret(value: Any, path: str) -> str:
    """A `whsec_` secret (or `generate`), checked; shared with notification subscriptions."""
    text = readers.string(value, path, max_length=200)
    if text == GENERATE:
        return text
    if not text.startswith(PREFIX):
        raise ValidationError(
            path, f"must be '{PREFIX}<base64>' (Standard Webhooks) or '{GENERATE}'"
        )
    try:
        key = base64.b64decode(text[len(PREFIX) :], validate=True)
    except (binascii.Error, ValueError):
        raise ValidationError(path, f"is not base64 after '{PREFIX}'") from None
    if not MIN_KEY_BYTES <= len(key) <= MAX_KEY_BYTES:
        raise ValidationError(
            path, f"must hold {MIN_KEY_BYTES} to {MAX_KEY_BYTES} bytes of key (has {len(key)})"
        )
    return text


#: Its entry in the catalog (`extension_catalog`).
ENTRY = ExtensionProperty(Location.COLLECTION, PROPERTY, validate, SCHEMA)
