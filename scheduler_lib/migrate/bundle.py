"""Restoring an export bundle (`wire/bundle.py`): its collection and jobs read into the same
`found` records as a template's, so a restore has the import's dry run, comparison,
`--replace` and idempotence.

The bundle holds everything as GET returns it in api-version 2026-12-01, so it is written
back in that version (the extensions kept). What a bundle cannot carry:

- Secrets. Each is named in `secrets` (by collection, job and JSON path); `--secrets FILE`
  gives their values (the same list with a `value` each). A job's secret not given makes it
  a `MissingSecret`, so the job comes in Disabled with a pause note naming it, as an import
  does (`missing_secrets`). A collection's signing secret not given is left out and the
  collection comes in Disabled, so none of its jobs sends unsigned what its receivers expect
  signed. A value in the side file that matches no secret of the bundles is refused: a typo
  must not silently leave a job Disabled. A notification subscription's `url` (a Slack or
  Teams webhook's path is its credential) is in the bundle masked, and its signing `secret`
  is only `hasSecret`; their values from the side file restore them, and without either the
  subscription is left out with a note (never kept unsigned: a receiver that verifies
  signatures would reject every post). The collection or job keeps its state: what it runs
  is unchanged, only who is told of failures.
- Each job's `status` (execution counts, last and next run): the scheduler's own record,
  begun afresh by the restored job (a `recurrence.count` counts again from the restore). A
  job that had ended (Completed, Faulted) comes in Disabled: a PUT cannot set those states,
  and an ended job must not run again.
- History: no route writes history (only runs do), so a bundle's history stays in the
  bundle, for reading; the restore says how many entries it leaves there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scheduler_lib.domain import CollectionState, JobState
from scheduler_lib.domain.json_values import JSON, JSONObject, as_list, as_object
from scheduler_lib.migrate.found import (
    Found,
    FoundCollection,
    FoundJob,
    MissingSecret,
    changed,
    dropped,
)
from scheduler_lib.migrate.problems import Note, NoteKind, SourceError
from scheduler_lib.wire import bundle, notifications
from scheduler_lib.wire.signing import PROPERTY as SIGNING
from scheduler_lib.wire.versions import LATEST_VERSION

_REASON = "an export never holds secret values; give it in --secrets FILE"
#: Job states the scheduler sets and a PUT cannot (`USER_JOB_STATES` are the others).
_ENDED = frozenset({JobState.COMPLETED.value.lower(), JobState.FAULTED.value.lower()})


def is_bundle(document: Any) -> bool:
    return isinstance(document, dict) and document.get("kind") == bundle.KIND


@dataclass
class SideSecrets:
    """`--secrets FILE`: `{"secrets": [{"collection", "job", "path", "value"}]}`, the
    bundle's own `secrets` list with the values filled in. Which were used is kept, so that
    one naming nothing is refused (`check_all_used`)."""

    values: dict[tuple[str, str, str], str] = field(default_factory=dict)
    used: set[tuple[str, str, str]] = field(default_factory=set)
    source: str = ""

    @classmethod
    def read(cls, path: Path | None, document: Any) -> SideSecrets:
        if path is None:
            return cls()
        entries = document.get("secrets") if isinstance(document, dict) else None
        if not isinstance(entries, list):
            raise SourceError(path.name, "is not a secrets file (no secrets list)")
        values = {}
        for index, entry in enumerate(entries):
            where = f"{path.name}: secrets[{index}]"
            if not isinstance(entry, dict):
                raise SourceError(where, "must be an object {collection, job, path, value}")
            for key in ("collection", "path", "value"):
                if not isinstance(entry.get(key), str) or not entry[key]:
                    raise SourceError(f"{where}.{key}", "is required (a string)")
            if entry.get("job") is not None and not isinstance(entry["job"], str):
                raise SourceError(f"{where}.job", "must be a job name or null")
            values[_key(entry["collection"], entry.get("job"), entry["path"])] = entry["value"]
        return cls(values, set(), path.name)

    def take(self, collection: str, job: str | None, path: str) -> str | None:
        key = _key(collection, job, path)
        if key in self.values:
            self.used.add(key)
        return self.values.get(key)

    def check_all_used(self) -> None:
        unused = [key for key in self.values if key not in self.used]
        if unused:
            collection, job, path = unused[0]
            raise SourceError(
                self.source,
                f"names a secret no bundle holds: {collection}/{job or '(collection)'} {path}",
                "copy the collection, job and path from the bundle's secrets list",
            )


def _key(collection: str, job: str | None, path: str) -> tuple[str, str, str]:
    return (collection.lower(), (job or "").lower(), path)


@dataclass(frozen=True)
class ListedSecret:
    """An entry of the bundle's `secrets` list: whose secret (job None: the collection's)
    and its JSON path."""

    job: str | None
    path: str

    @classmethod
    def read(cls, entry: JSONObject) -> ListedSecret:
        job = entry.get("job")
        return cls(None if job is None else str(job), str(entry.get("path")))


def read_bundle(
    document: JSONObject, name: str, secrets: SideSecrets, location: str | None = None
) -> Found:
    """The collection and jobs of a bundle (`name` is its file's, for messages); `location`
    (`--location`) moves the collection to another region's name."""
    collection, jobs = _check(document, name)
    where = f"{name}: collection"
    parts = str(collection.get("id", "")).split("/")
    if len(parts) != 9 or parts[3].lower() != "resourcegroups" or not parts[4]:
        raise SourceError(f"{where}.id", "is not a job collection's ARM id")
    group, collection_name = parts[4], parts[8]
    entries = as_list(document.get("secrets"))
    listed = [ListedSecret.read(s) for s in entries if isinstance(s, dict)]
    properties = as_object(collection.get("properties"))
    found = Found()
    item = FoundCollection(
        collection_name, where, collection.get("location"), collection.get("tags"),
        dict(properties), group,
        api_version=LATEST_VERSION.value,
    )  # fmt: skip
    if location is not None and location != item.location:
        moved = f"{item.location} → {location} (--location)"
        item.notes.append(changed(f"{where}.location", moved))
        item.location = location
    _signing(item, [s.path for s in listed if s.job is None], secrets)
    _notification_secrets(item.properties, item.notes, secrets, item.name, None)
    _leftovers(item, document)
    found.collections.append(item)
    for index, job in enumerate(jobs):
        found.jobs.append(_job(job, f"{name}: jobs[{index}]", item, listed, secrets))
    return found


def _check(document: JSONObject, name: str) -> tuple[JSONObject, list[JSON]]:
    """The bundle's collection and jobs, once its version and completeness are checked."""
    if document.get("bundleVersion") != bundle.BUNDLE_VERSION:
        raise SourceError(
            f"{name}: bundleVersion",
            f"is {document.get('bundleVersion')!r}; this scheduler reads {bundle.BUNDLE_VERSION}",
        )
    if document.get("complete") is not True:
        raise SourceError(name, "is cut short (no complete: true at its end)", "export it again")
    collection, jobs = document.get("collection"), document.get("jobs")
    if not isinstance(collection, dict) or not isinstance(jobs, list):
        raise SourceError(name, "has no collection object or jobs list")
    return collection, jobs


def _signing(item: FoundCollection, paths: list[str], secrets: SideSecrets) -> None:
    listed = item.properties.get(SIGNING)
    entries = [dict(e) for e in listed if isinstance(e, dict)] if isinstance(listed, list) else []
    kept: list[JSON] = []
    for index, entry in enumerate(entries):
        path = f"properties.{SIGNING}[{index}].value"
        entry.pop("createdTime", None)
        value = secrets.take(item.name, None, path) if path in paths else None
        if value is None:
            item.notes.append(Note(NoteKind.MISSING_SECRET, path, _REASON))
            continue
        kept.append({**entry, "value": value})
    if len(kept) < len(entries):
        state = item.properties.get("state", CollectionState.ENABLED.value)
        if str(state).lower() != CollectionState.DISABLED.value.lower():
            item.notes.append(changed("properties.state", f"{state} → Disabled (unsigned)"))
        item.properties["state"] = CollectionState.DISABLED.value
    if kept:
        item.properties[SIGNING] = kept
    else:
        item.properties.pop(SIGNING, None)


def _notification_secrets(
    properties: JSONObject, notes: list[Note], secrets: SideSecrets, collection: str,
    job: str | None,
) -> None:  # fmt: skip
    """Each subscription's masked URL and signing secret (`hasSecret`) given their values
    from the side file; one missing either is left out with a note. Kept unsigned instead,
    a receiver that verifies signatures would reject every post and nothing would say why."""
    entries = properties.get(notifications.PROPERTY)
    if not isinstance(entries, list):
        return
    kept: list[JSON] = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            kept.append(entry)
            continue
        prefix = f"properties.{notifications.PROPERTY}[{index}]"
        entry = dict(entry)
        missing: list[str] = []
        url = entry.get("url")
        if isinstance(url, str) and notifications.is_masked(url):
            entry["url"] = secrets.take(collection, job, f"{prefix}.url")
            missing += [] if entry["url"] else [f"{prefix}.url"]
        if entry.pop(notifications.HAS_SECRET, None):
            path = f"{prefix}.{notifications.SECRET}"
            entry[notifications.SECRET] = secrets.take(collection, job, path)
            missing += [] if entry[notifications.SECRET] else [path]
        for path in missing:
            notes.append(Note(NoteKind.MISSING_SECRET, path, _REASON + "; subscription left out"))
        if not missing:
            kept.append(entry)
    properties[notifications.PROPERTY] = kept


def _leftovers(item: FoundCollection, document: JSONObject) -> None:
    fresh = "the scheduler's record of runs; it starts afresh"
    item.notes.append(dropped("jobs[].properties.status", fresh))
    history = as_list(document.get("history"))
    count = sum(len(as_list(h.get("entries"))) for h in history if isinstance(h, dict))
    if count:
        item.notes.append(dropped(
            "history", f"{count} entries stay in the bundle: only runs write history",
        ))  # fmt: skip


def _job(
    job: JSON, where: str, collection: FoundCollection, listed: list[ListedSecret],
    secrets: SideSecrets,
) -> FoundJob:  # fmt: skip
    given = job.get("properties") if isinstance(job, dict) else None
    if not isinstance(job, dict) or not isinstance(given, dict):
        raise SourceError(where, "is not a job as GET returns it (no properties)")
    name = str(job.get("name") or "").split("/")[-1]
    if not name:
        raise SourceError(f"{where}.name", "is required")
    properties = {k: v for k, v in given.items() if k.lower() != "status"}
    found = FoundJob(collection.name, name, where, properties, collection.resource_group,
                     api_version=LATEST_VERSION.value)  # fmt: skip
    state = str(properties.get("state") or "")
    if state.lower() in _ENDED:
        # Only Enabled and Disabled can be written; an ended job must not run again.
        ended = f"{state} → Disabled (it had ended)"
        found.notes.append(changed(f"{where}.properties.state", ended))
        properties["state"] = JobState.DISABLED.value
    _notification_secrets(properties, found.notes, secrets, collection.name, name)
    for entry in listed:
        if (entry.job or "").lower() != name.lower():
            continue
        path = entry.path
        if path.startswith(f"properties.{notifications.PROPERTY}["):
            continue  # read by `_notification_secrets`
        value = secrets.take(collection.name, name, path)
        if value is None:
            found.missing.append(MissingSecret(path, "export bundle", _REASON))
        else:
            _place(properties, path, value, where)
    return found


def _place(properties: JSONObject, path: str, value: str, where: str) -> None:
    *parents, last = path.removeprefix("properties.").split(".")
    node: JSON = properties
    for part in parents:
        node = node.get(part) if isinstance(node, dict) else None
    if not isinstance(node, dict):
        raise SourceError(f"{where}: {path}", "is not where the job holds that secret")
    node[last] = value
