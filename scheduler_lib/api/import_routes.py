"""`POST .../subscriptions/{s}/providers/Microsoft.Scheduler/import` (api-version 2026-12-01):
the import of `python -m scheduler_lib import` for the dashboard and any HTTP client. The
use case is `service/imports.py`; this is the HTTP around it: the JSON body read and checked
field by field (400 naming the field), the per-item results answered 200.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from scheduler_lib.api import paths
from scheduler_lib.api.dependencies import Ctx
from scheduler_lib.api.docs import operation
from scheduler_lib.api.openapi_versions import since
from scheduler_lib.api.requests import json_response, read_json
from scheduler_lib.errors import ValidationError
from scheduler_lib.service.imports import (
    MAX_FILES,
    MAX_TOTAL_BYTES,
    ImportRequest,
    ItemResult,
    SourceFile,
    import_sources,
)
from scheduler_lib.timeutil import iso_z
from scheduler_lib.wire.versions import LATEST_VERSION, require

router = APIRouter(tags=["Job collections"])

#: The body: the files' text (JSON-escaped, so up to twice their size) and a few fields.
BODY_LIMIT = 2 * MAX_TOTAL_BYTES + 64 * 1024
_FIELDS = {"files", "dryRun", "replace", "resourceGroup", "collection", "location", "set"}


class ItemResultWire(TypedDict):
    """An item's result as the answer lists it."""

    type: str
    resourceGroup: str
    jobCollection: str
    outcome: str
    succeeded: bool
    source: str
    details: list[str]
    notes: list[str]
    name: NotRequired[str]
    state: NotRequired[str]
    nextRuns: NotRequired[list[str]]


def result_to_wire(result: ItemResult) -> ItemResultWire:
    """An item's result: names, outcome, notes and next runs; never its body (no secret)."""
    wire: ItemResultWire = {
        "type": result.kind,
        "resourceGroup": result.resource_group,
        "jobCollection": result.collection,
        "outcome": result.outcome,
        "succeeded": result.succeeded,
        "source": result.source,
        "details": result.details,
        "notes": result.notes,
    }
    if result.name is not None:
        wire["name"] = result.name
    if result.state is not None:
        wire["state"] = result.state
    if result.next_runs is not None:
        wire["nextRuns"] = [iso_z(run) for run in result.next_runs]
    return wire


def read_request(subscription: str, body: Any) -> ImportRequest:
    """The body as an ImportRequest; ValidationError naming the first bad field."""
    if not isinstance(body, dict):
        raise ValidationError("body", "must be a JSON object")
    unknown = sorted(set(body) - _FIELDS)
    if unknown:
        raise ValidationError(
            unknown[0], f"is not a field of an import ({', '.join(sorted(_FIELDS))})"
        )
    files = body.get("files")
    if not isinstance(files, list) or not files:
        raise ValidationError("files", "must be a non-empty list of {name, content}")
    if len(files) > MAX_FILES:
        raise ValidationError("files", f"at most {MAX_FILES} files per import")
    read = []
    for index, file in enumerate(files):
        if not isinstance(file, dict) or set(file) != {"name", "content"}:
            raise ValidationError(f"files[{index}]", "must be an object {name, content}")
        for key in ("name", "content"):
            if not isinstance(file[key], str):
                raise ValidationError(f"files[{index}].{key}", "must be a string")
        read.append(SourceFile(file["name"], file["content"]))
    flags = {key: body.get(key, default) for key, default in (("dryRun", True), ("replace", False))}
    for key, value in flags.items():
        if not isinstance(value, bool):
            raise ValidationError(key, "must be true or false")
    names = {key: body.get(key) for key in ("resourceGroup", "collection", "location")}
    for key, value in names.items():
        if value is not None and (not isinstance(value, str) or not value):
            raise ValidationError(key, "must be a non-empty string")
    sets = body.get("set", {})
    if not isinstance(sets, dict) or not all(isinstance(v, str) for v in sets.values()):
        raise ValidationError("set", "must be an object of strings (NAME: VALUE, as --set)")
    return ImportRequest(
        subscription, read, flags["dryRun"], flags["replace"], names["resourceGroup"],
        names["collection"], [f"{name}={value}" for name, value in sets.items()],
        names["location"],
    )  # fmt: skip


_DOC = operation(
    "JobCollections_Import",
    "Import job collections and jobs from ARM, Bicep, Terraform or export files "
    "(api-version 2026-12-01)",
    (200, 400),
    description="Body `{files: [{name, content}], dryRun (default true), replace, "
    "resourceGroup?, collection?, location?, set?: {NAME: VALUE}}`: what `python -m scheduler_lib "
    f"import` does (docs/import.md), at most {MAX_FILES} files, {MAX_TOTAL_BYTES} bytes in "
    "all. Answers 200 with each collection's and job's `outcome` (would create, created, "
    "unchanged, conflict, replaced, refused, skipped), its notes and differences, and a "
    "job's `nextRuns`; never a body, so never a secret.",
)
_EXTRA = {**since(LATEST_VERSION)}


@router.post(paths.IMPORT, openapi_extra=_EXTRA, **_DOC)
async def import_route(request: Request, ctx: Ctx, subscriptionId: str) -> Response:
    require(ctx.version, LATEST_VERSION, "an import")
    body = await read_json(request, BODY_LIMIT)
    wanted = read_request(subscriptionId, body)
    now = ctx.clock()
    results = await run_in_threadpool(import_sources, ctx, wanted, now=now)
    return json_response({
        "dryRun": wanted.dry_run,
        "succeeded": all(r.succeeded for r in results),
        "value": [result_to_wire(r) for r in results],
    })  # fmt: skip
