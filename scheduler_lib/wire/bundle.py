"""The export bundle's format (api-version 2026-12-01): one JSON document holding a job
collection and its jobs as GET returns them, the secrets they hold (named, never their
values) and, when asked, their recent history.

```
{"kind": "SchedulerExportBundle", "bundleVersion": 1, "apiVersion": "2026-12-01",
 "exportedAt": ISO, "includesHistory": bool,
 "collection": {... GET .../jobCollections/{c} ...},
 "jobs": [{... GET .../jobs/{j} ...}, ...],
 "secrets": [{"collection": c, "job": name | null,
              "path": "properties.action.request.authentication.password"}, ...],
 "history": [{"job": name, "entries": [{...properties...}], "truncated": bool}],
 "jobCount": n, "complete": true}
```

`secrets` names each notification subscription's `url` and `secret` too
(`notification_secret_paths`). Written here and read by the restore (`migrate/bundle.py`),
so both sides share one vocabulary. `complete` is the last key written: a bundle cut short
by a dropped connection is not valid JSON, and one that was somehow closed early lacks it;
the restore refuses both.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any, TypedDict

from scheduler_lib.wire import notifications, secrets, signing
from scheduler_lib.wire.shapes import JSONObject, as_list

KIND = "SchedulerExportBundle"
BUNDLE_VERSION = 1
#: How far back the history of an export reaches (`includeHistory=true`).
HISTORY_WINDOW = timedelta(days=60)
#: The most history entries exported per job (newest first; `truncated` says when the
#: window held more). The whole history stays readable through Jobs_ListJobHistory.
HISTORY_PER_JOB = 100
#: Jobs read from storage at a time while a bundle is written (the memory an export holds).
JOB_PAGE = 100


class LeftOutSecret(TypedDict):
    """A secret the bundle leaves out: whose (`job` None: the collection's) and where."""

    collection: str
    job: str | None
    path: str


class JobHistory(TypedDict):
    """A job's history entries in the bundle, newest first."""

    job: str
    entries: list[JSONObject]  # `store.history.HistoryEntry.to_properties`
    truncated: bool


_REF = "#/components/schemas/"
#: The bundle's schema in the 2026-12-01 OpenAPI document (the route's 200 answer).
SCHEMA: JSONObject = {
    "type": "object",
    "properties": {
        "kind": {"type": "string", "enum": [KIND]},
        "bundleVersion": {"type": "integer", "enum": [BUNDLE_VERSION]},
        "apiVersion": {"type": "string"},
        "exportedAt": {"type": "string", "format": "date-time"},
        "includesHistory": {"type": "boolean"},
        "collection": {"$ref": _REF + "JobCollectionDefinition"},
        "jobs": {"type": "array", "items": {"$ref": _REF + "JobDefinition"}},
        "secrets": {
            "type": "array",
            "description": "each secret left out, by collection, job (null: the collection's) "
            "and JSON path",
            "items": {
                "type": "object",
                "properties": {
                    "collection": {"type": "string"},
                    "job": {"type": "string", "nullable": True},
                    "path": {"type": "string"},
                },
            },
        },
        "history": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "job": {"type": "string"},
                    "entries": {
                        "type": "array",
                        "items": {"$ref": _REF + "JobHistoryDefinitionProperties"},
                    },
                    "truncated": {"type": "boolean"},
                },
            },
        },
        "jobCount": {"type": "integer"},
        "complete": {"type": "boolean", "description": "written last: absent, cut short"},
    },
}


def job_secret_paths(definition: Mapping[str, Any]) -> list[str]:
    """The JSON paths (from the job body, `properties.`...) of the secrets a stored job
    definition holds: what the bundle leaves out and the restore asks for."""
    found = []
    for holder in secrets.holders(definition.get("action")):
        for secret in holder.secrets:
            node: Any = holder.node
            for part in secret.split("."):
                node = node.get(part) if isinstance(node, dict) else None
            if node is not None:
                found.append(f"properties.{holder.path}.{secret}")
    return found + notification_secret_paths(definition)


def collection_secret_paths(properties: JSONObject) -> list[str]:
    """The paths of a collection's signing secrets' values (`value` of each entry)."""
    entries = as_list(properties.get(signing.PROPERTY))
    paths = [f"properties.{signing.PROPERTY}[{i}].value" for i, _ in enumerate(entries)]
    return paths + notification_secret_paths(properties)


def notification_secret_paths(properties: Mapping[str, Any]) -> list[str]:
    """The `url` of each notification subscription (its path and query are a credential, a
    Slack or Teams webhook's, so the bundle holds it masked, as GET shows it) and its `secret`
    for each one that signs: without it listed a restored subscription would post unsigned to
    a receiver that verifies signatures."""
    found = []
    for index, entry in enumerate(properties.get(notifications.PROPERTY) or ()):
        found.append(f"properties.{notifications.PROPERTY}[{index}].url")
        if isinstance(entry, Mapping) and entry.get(notifications.SECRET):
            found.append(f"properties.{notifications.PROPERTY}[{index}].{notifications.SECRET}")
    return found
