"""Import use case (the API's `POST .../providers/Microsoft.Scheduler/import` and the
dashboard's Import page): uploaded ARM JSON, Bicep, Terraform or export-bundle files become
job collections and jobs, exactly as `python -m scheduler_lib import` makes them.

Nothing of the import is re-implemented here: `migrate.sources` reads the files,
`migrate.convert` builds the bodies (a job whose secret is only referenced is Disabled with
a pause note, `migrate.missing_secrets`), and `migrate.apply` compares and decides
(create / unchanged / conflict left alone unless `replace` / refused). What differs from the
CLI is only how it reaches the scheduler: `ServiceScheduler` answers `apply`'s GET and PUT
with the same use cases the API's routes call (`service.collections`, `service.jobs`), so an
import is validated, quota-checked and stored as any PUT is, never the store directly.

The upload is bounded (`MAX_FILES` files of at most `MAX_FILE_BYTES`, `MAX_TOTAL_BYTES` in
all): the files are parsed in memory by the request that sent them.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from scheduler_lib.errors import (
    ConflictError,
    NotFoundError,
    PreconditionFailedError,
    SchedulerError,
    ValidationError,
)
from scheduler_lib.migrate.apply import GOOD, Result, execute
from scheduler_lib.migrate.client import Address, ApiError
from scheduler_lib.migrate.confine import confined_to
from scheduler_lib.migrate.convert import ImportedCollection, Target, build_plan
from scheduler_lib.migrate.deployment_functions import Deployment
from scheduler_lib.migrate.problems import SourceError
from scheduler_lib.migrate.report import PREVIEW_COUNT
from scheduler_lib.migrate.sources import SourceOptions, read_sources
from scheduler_lib.schedule import preview_with_reason
from scheduler_lib.service.collections import CollectionName, get_collection, put_collection
from scheduler_lib.service.context import ApiContext
from scheduler_lib.service.jobs import JobName, get_job, put_job
from scheduler_lib.wire import arm
from scheduler_lib.wire.collections import collection_to_wire
from scheduler_lib.wire.jobs import job_to_wire
from scheduler_lib.wire.shapes import JSONObject, to_json
from scheduler_lib.wire.versions import parse_version

MAX_FILES = 20
MAX_FILE_BYTES = 512 * 1024
MAX_TOTAL_BYTES = 2 * 1024 * 1024
SUFFIXES = (".json", ".bicep", ".tf", ".tfvars")


@dataclass(frozen=True)
class SourceFile:
    name: str  # a bare file name; its suffix says its kind
    content: str


@dataclass(frozen=True)
class ImportRequest:
    subscription: str
    files: list[SourceFile]
    dry_run: bool = True
    replace: bool = False
    resource_group: str | None = None
    collection: str | None = None
    sets: list[str] = field(default_factory=list)  # NAME=VALUE, as the CLI's --set
    location: str | None = None  # what resourceGroup().location is


@dataclass(frozen=True)
class ItemResult:
    """One collection's or job's outcome, with nothing of its body (so no secret)."""

    kind: str  # "jobCollection" or "job"
    resource_group: str
    collection: str
    name: str | None
    outcome: str
    succeeded: bool
    details: list[str]
    notes: list[str]
    next_runs: list[datetime] | None
    state: str | None
    source: str


class ServiceScheduler:
    """`migrate.apply`'s scheduler client, answered by the use cases instead of HTTP."""

    def __init__(self, ctx: ApiContext) -> None:
        self.ctx = ctx

    def _at(self, version: str) -> ApiContext:
        return replace(self.ctx, version=parse_version(version))

    def get(self, address: Address, version: str) -> JSONObject | None:
        ctx = self._at(version)
        try:
            if address.job is None:
                record = get_collection(ctx, _collection_name(address))
                return collection_to_wire(record, ctx.version)
            job = get_job(ctx, _job_name(address))
            return to_json(job_to_wire(job, now=ctx.clock(), version=ctx.version))
        except NotFoundError:
            return None

    def put(self, address: Address, body: JSONObject, version: str) -> JSONObject:
        ctx = self._at(version)
        try:
            if address.job is None:
                put_collection(ctx, _collection_name(address), body, None, ctx.clock())
            else:
                put_job(ctx, _job_name(address), body, None, ctx.clock())
        except SchedulerError as error:
            raise ApiError(_status(error), type(error).__name__, error.message) from error
        return {}


def _status(error: SchedulerError) -> int:
    """The status the API's PUT answers (for the result's text only)."""
    kinds = ((ValidationError, 400), (NotFoundError, 404), (ConflictError, 409),
             (PreconditionFailedError, 412))  # fmt: skip
    return next((status for kind, status in kinds if isinstance(error, kind)), 500)


def _collection_name(address: Address) -> CollectionName:
    return CollectionName(address.subscription, address.resource_group, address.collection)


def _job_name(address: Address) -> JobName:
    return JobName(address.subscription, address.resource_group, address.collection,
                   address.job or "")  # fmt: skip


def check_files(files: list[SourceFile]) -> None:
    """The upload's bounds and names; ValidationError naming the field."""
    if not files:
        raise ValidationError("files", "at least one file is required")
    if len(files) > MAX_FILES:
        raise ValidationError("files", f"at most {MAX_FILES} files per import")
    total = 0
    for index, file in enumerate(files):
        name = file.name
        if not name or "/" in name or "\\" in name or name.startswith("."):
            raise ValidationError(f"files[{index}].name", "must be a plain file name")
        if not name.lower().endswith(SUFFIXES):
            raise ValidationError(
                f"files[{index}].name", f"must end with one of {', '.join(SUFFIXES)}"
            )
        size = len(file.content.encode("utf-8", "surrogatepass"))
        if size > MAX_FILE_BYTES:
            raise ValidationError(f"files[{index}].content", f"at most {MAX_FILE_BYTES} bytes")
        total += size
    if total > MAX_TOTAL_BYTES:
        raise ValidationError("files", f"at most {MAX_TOTAL_BYTES} bytes in all")
    if len({f.name.lower() for f in files}) != len(files):
        raise ValidationError("files", "two files have the same name")


def import_sources(ctx: ApiContext, request: ImportRequest, *, now: datetime) -> list[ItemResult]:
    """The import's result per collection and job; written unless `dry_run`.

    A source that cannot be read is a ValidationError on `files` (nothing is written)."""
    arm.check_names(request.subscription, request.resource_group or "rg")
    check_files(request.files)
    with tempfile.TemporaryDirectory(prefix="scheduler-import-") as folder:
        root = Path(folder)
        paths: list[Path] = []
        parameters: list[Path] = []
        for file in request.files:
            target = root / file.name
            target.write_text(file.content, encoding="utf-8", errors="surrogatepass")
            is_parameters = file.name.lower().endswith(".parameters.json")
            (parameters if is_parameters else paths).append(target)
        deployment = Deployment(
            request.subscription, request.resource_group, request.location, None
        )
        options = SourceOptions(paths, parameters, list(request.sets), deployment,
                                request.collection)  # fmt: skip
        try:
            with confined_to(root):
                found, _ = read_sources(options)
            plan = build_plan(
                found, Target(request.subscription, request.resource_group, request.collection)
            )
        except (SourceError, OSError) as error:
            raise ValidationError("files", str(error).replace(f"{root}/", "")) from None
    results = execute(plan, ServiceScheduler(ctx), request.subscription,
                      dry_run=request.dry_run, replace=request.replace)  # fmt: skip
    return [_item(result, now) for result in results]


def _item(result: Result, now: datetime) -> ItemResult:
    item = result.item
    runs, state = None, None
    if isinstance(item, ImportedCollection):
        kind, collection, name = "jobCollection", item.name, None
    else:
        kind, collection, name = "job", item.collection, item.name
        state = str(item.properties.get("state") or "Enabled")
        if result.checked is not None:
            runs, _ = preview_with_reason(result.checked.timing, now=now, count=PREVIEW_COUNT)
    return ItemResult(kind, item.resource_group, collection, name, str(result.outcome),
                      result.outcome in GOOD, list(result.details), [str(n) for n in item.notes],
                      runs, state, item.where)  # fmt: skip
