"""2026-12-01: `properties.tags` of a job, name/value strings to select jobs by (the list's
`$filter=tagName eq 'env' and tagValue eq 'prod'`, a bulk operation's `tag` selector, the
dashboard's tag filter).

ARM's tag limits, checked by the collection's own tag reader (`tags.resource_tags`:
50 tags, names 1-512 characters, values up to 256). Kept in the job's properties, not beside
them as a collection's top-level `tags`, because a job's JSON in Azure Scheduler had no
top-level tags: as a catalog entry it is validated, stored, merge-patched, left out of a
2016-03-01 answer and documented like every other extension. A job's tags count towards its
16 KB (`jobs.MAX_JOB_BYTES`). Tag names match in any case, as ARM's do; values exactly.
"""

from __future__ import annotations

from typing import Any

from scheduler_lib.domain.definition import TAGS
from scheduler_lib.wire.shapes import JSONObject
from scheduler_lib.wire.tags import MAX_TAGS, resource_tags
from scheduler_lib.wire.versions import ExtensionProperty, Location

PROPERTY = TAGS


def validate(value: Any, path: str) -> dict[str, str]:
    return resource_tags(value, path)


def tags_of(definition: JSONObject) -> dict[str, str]:
    tags = definition.get(PROPERTY)
    if not isinstance(tags, dict):
        return {}
    return {name: value for name, value in tags.items() if isinstance(value, str)}


def has_tag(definition: JSONObject, name: str, value: str | None = None) -> bool:
    """Whether the job has the tag `name` (any case) and, when `value` is given, that value."""
    wanted = name.lower()
    return any(
        key.lower() == wanted and (value is None or item == value)
        for key, item in tags_of(definition).items()
    )


SCHEMA: JSONObject = {
    "type": "object",
    "additionalProperties": {"type": "string", "maxLength": 256},
    "maxProperties": MAX_TAGS,
    "description": "Name/value pairs to find and select jobs by (Jobs_List `$filter=tagName eq "
    "'env' and tagValue eq 'prod'`, a bulk operation's `tag`). ARM's limits: at most 50 tags, "
    "names 1-512 characters (matched in any case), values up to 256.",
}


ENTRY = ExtensionProperty(Location.JOB, PROPERTY, validate, SCHEMA)
