"""A job collection as one export bundle (`wire/bundle.py`), written a page at a time.

The collection is read (and its absence is a 404) before the first byte goes out, so every
refusal is an ordinary ARM error. Then the bundle is produced as a stream of text chunks:
`JOB_PAGE` jobs are read from storage at a time and written out, never the whole collection
at once, so what an export holds in memory is one page of jobs (or of one job's history),
whatever the collection's size. Jobs are read page by page while others may be written, as
any paged list is: a job created or deleted during the export may or may not be in it.

Each job is written as GET returns it in api-version 2026-12-01 (secrets removed by the same
`job_to_wire`; a recurring job without `startTime` with the instant its schedule counts from,
see `_job`); the secrets it holds are named in `secrets` by job and JSON path, never
their values. With `include_history`, each job's entries of the last `HISTORY_WINDOW` (at
most `HISTORY_PER_JOB`, newest first) follow in `history`, read in a second pass.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from scheduler_lib.domain import JobRecord
from scheduler_lib.store import TableStore, get_collection, list_history
from scheduler_lib.store import jobs as job_store
from scheduler_lib.timeutil import iso_z
from scheduler_lib.wire import arm, bundle
from scheduler_lib.wire.collections import collection_to_wire
from scheduler_lib.wire.jobs import job_to_wire
from scheduler_lib.wire.shapes import JobAnswer, JSONObject
from scheduler_lib.wire.versions import LATEST_VERSION


@dataclass(frozen=True)
class ExportRequest:
    subscription_id: str
    resource_group: str
    collection: str
    include_history: bool = False


def export_collection(store: TableStore, request: ExportRequest, *, now: datetime) -> Iterator[str]:
    """The bundle's text, chunk by chunk. NotFoundError (no collection) and ValidationError
    (a bad name) are raised here, before the stream starts."""
    arm.check_names(request.subscription_id, request.resource_group, request.collection)
    record = get_collection(
        store, request.subscription_id, request.resource_group, request.collection
    )
    collection = collection_to_wire(record, LATEST_VERSION)
    secrets: list[bundle.LeftOutSecret] = [
        {"collection": record.name, "job": None, "path": path}
        for path in bundle.collection_secret_paths(record.properties)
    ]
    return _chunks(store, request, (record.name, collection), secrets, now)


def _chunks(
    store: TableStore,
    request: ExportRequest,
    collection: tuple[str, JSONObject],
    secrets: list[bundle.LeftOutSecret],
    now: datetime,
) -> Iterator[str]:
    """`collection`: its name and its wire form."""
    collection_name, wire = collection
    head = {
        "kind": bundle.KIND,
        "bundleVersion": bundle.BUNDLE_VERSION,
        "apiVersion": LATEST_VERSION.value,
        "exportedAt": iso_z(now),
        "includesHistory": request.include_history,
        "collection": wire,
    }
    yield _dumps(head)[:-1] + ',"jobs":['
    count = 0
    for record in _jobs(store, request):
        yield ("," if count else "") + _dumps(_job(record, now))
        secrets += [
            {"collection": collection_name, "job": record.name, "path": path}
            for path in bundle.job_secret_paths(record.definition.document)
        ]
        count += 1
    yield '],"secrets":' + _dumps(secrets)
    if request.include_history:
        yield ',"history":['
        for index, record in enumerate(_jobs(store, request)):
            yield ("," if index else "") + _dumps(_history(store, record, now))
        yield "]"
    yield f',"jobCount":{count},"complete":true}}\n'


def _jobs(store: TableStore, request: ExportRequest) -> Iterator[JobRecord]:
    token: str | None = None
    while True:
        page, token = job_store.list_jobs(
            store,
            request.subscription_id,
            request.resource_group,
            request.collection,
            page_size=bundle.JOB_PAGE,
            continuation=token,
        )
        yield from page
        if token is None:
            return


def _job(record: JobRecord, now: datetime) -> JobAnswer:
    """The job as GET returns it; a recurring job without `startTime` gets the instant its
    schedule counts from (its creation, or its last change of schedule) as `startTime`, so
    that the restored job keeps its phase: an hourly job created at 09:00 runs at :00 after
    a restore too, not at the minute of the restore."""
    wire = job_to_wire(record, now=now, version=LATEST_VERSION)
    if record.definition.recurs and record.definition.start_time is None:
        wire["properties"]["startTime"] = iso_z(record.created_time)
    return wire


def _history(store: TableStore, record: JobRecord, now: datetime) -> bundle.JobHistory:
    """The job's entries since `now - HISTORY_WINDOW`, newest first, at most
    `HISTORY_PER_JOB` (one more is read to know whether the window held more)."""
    since = now - bundle.HISTORY_WINDOW
    entries: list[JSONObject] = []
    truncated = False
    token: str | None = None
    while True:
        page, token = list_history(
            store, record.history_key, page_size=bundle.HISTORY_PER_JOB + 1, continuation=token
        )
        for entry in page:
            if entry.start_time < since:
                return _entries(record, entries, truncated)
            if len(entries) == bundle.HISTORY_PER_JOB:
                return _entries(record, entries, True)
            entries.append(entry.to_properties())
        if token is None:
            return _entries(record, entries, truncated)


def _entries(record: JobRecord, entries: list[JSONObject], truncated: bool) -> bundle.JobHistory:
    return {"job": record.name, "entries": entries, "truncated": truncated}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
