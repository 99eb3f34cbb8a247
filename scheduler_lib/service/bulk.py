"""Bulk operations (api-version 2026-12-01): enable, disable, run now or delete a selection of
a collection's jobs, each job reported on its own.

A selection is exactly one of: `names` (a list), `tag` (`{"name", "value"?}`, as Jobs_List's
`tagName`/`tagValue`) or `filter` (Jobs_List's `$filter` grammar, `wire/job_filter`), and at
most `MAX_JOBS` jobs, so one request stays well inside an HTTP request's time (a selection
that matches more is a 400 naming the selector, before anything is changed). Bad input is
a 400 naming the field; after that every job gets its own result, in the order given (names)
or by name (tag, filter): Succeeded, Skipped (already in the state asked for), NotFound, or
Failed with the error the single-job operation gave. Never all-or-nothing: the jobs before
a failure stay changed, and the answer says so.

Each job goes through the single-job use case (`CollectionJobs`: the API's PATCH of
`state`, Jobs_Run, Jobs_Delete), so a bulk change is validated, ETag-retried, rescheduled,
quota-checked and history-purged exactly as the same change made one job at a time. The
rules here see the jobs through that port only (`service/bulk_jobs.py` is the real one), so
they are tested without a store.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from scheduler_lib.domain import JobRecord, JobState
from scheduler_lib.errors import NotFoundError, SchedulerError, ValidationError
from scheduler_lib.wire import readers
from scheduler_lib.wire.job_filter import JobFilter, parse_job_filter
from scheduler_lib.wire.versions import LATEST_VERSION

#: The most jobs one request acts on (names given, or jobs a tag or filter matches).
MAX_JOBS = 100
SELECTORS = ("names", "tag", "filter")


class BulkOperation(StrEnum):
    ENABLE = "Enable"
    DISABLE = "Disable"
    RUN = "Run"
    DELETE = "Delete"


class BulkOutcome(StrEnum):
    SUCCEEDED = "Succeeded"
    SKIPPED = "Skipped"
    NOT_FOUND = "NotFound"
    FAILED = "Failed"


_WANTED = {BulkOperation.ENABLE: JobState.ENABLED, BulkOperation.DISABLE: JobState.DISABLED}


class CollectionJobs(Protocol):
    """The single-job use cases of one collection, at the request's instant."""

    def check(self) -> None:
        """NotFoundError when the collection does not exist."""

    def every(self) -> list[JobRecord]: ...

    def read(self, name: str) -> JobRecord: ...

    def set_state(self, name: str, state: JobState) -> JobRecord: ...

    def run(self, name: str) -> JobRecord: ...

    def delete(self, name: str) -> None: ...


@dataclass(frozen=True)
class BulkRequest:
    operation: BulkOperation
    names: tuple[str, ...] | None = None
    where: JobFilter | None = None
    selector: str = "names"


@dataclass(frozen=True)
class JobResult:
    name: str
    outcome: BulkOutcome
    state: str | None = None
    message: str | None = None
    error: SchedulerError | None = None


def read_request(body: Any, collection: str) -> BulkRequest:
    """The request `body` asks for of the jobs of `collection` (the path's), or a
    ValidationError naming the field."""
    source = readers.keys(body, "", ("operation", *SELECTORS))
    if source.get("operation") is None:
        raise ValidationError("operation", "is required: Enable, Disable, Run or Delete")
    operation = BulkOperation(
        readers.enum(source["operation"], "operation", [o.value for o in BulkOperation])
    )
    given = [key for key in SELECTORS if source.get(key) is not None]
    if len(given) != 1:
        field = given[1] if given else "names"
        raise ValidationError(field, "give exactly one selection: names, tag or filter")
    selector = given[0]
    if selector == "names":
        return BulkRequest(operation, names=_names(source["names"], collection))
    if selector == "tag":
        tag = readers.keys(source["tag"], "tag", ("name", "value"))
        if tag.get("name") is None:
            raise ValidationError("tag.name", "is required")
        name = readers.string(tag["name"], "tag.name", max_length=512)
        value = None
        if tag.get("value") is not None:
            value = readers.string(tag["value"], "tag.value", max_length=256, empty=True)
        return BulkRequest(
            operation, where=JobFilter(tag_name=name, tag_value=value), selector="tag"
        )
    text = readers.string(source["filter"], "filter", max_length=2048)
    where = parse_job_filter(text, LATEST_VERSION, field="filter")
    if where == JobFilter():
        raise ValidationError("filter", "must select something, e.g. state eq 'Disabled'")
    return BulkRequest(operation, where=where, selector="filter")


def _names(value: Any, collection: str) -> tuple[str, ...]:
    """The jobs' own names: each as the job's name (`job-a`) or as Jobs_List answers it,
    the ARM name of a nested resource (`coll/job-a`), so that listed names can be sent back."""
    if not isinstance(value, list) or not value:
        raise ValidationError("names", "must be a non-empty list of job names")
    if len(value) > MAX_JOBS:
        raise ValidationError("names", f"must name at most {MAX_JOBS} jobs per request")
    names: list[str] = []
    for index, item in enumerate(value):
        path = f"names[{index}]"
        name = _job_name(readers.string(item, path, max_length=201), collection, path)
        readers.string(name, path, max_length=100)  # the job's own name, as before
        if name.lower() in {n.lower() for n in names}:
            raise ValidationError(path, f"names the job {name!r} twice")
        names.append(name)
    return tuple(names)


def _job_name(text: str, collection: str, path: str) -> str:
    """`job-a` of `job-a` or `coll/job-a` (the collection in any case, as in the path)."""
    if "/" not in text:
        return text
    parts = text.split("/")
    if len(parts) != 2 or not parts[1]:
        raise ValidationError(path, "must be a job's name or collection/job, as Jobs_List names it")
    if parts[0].lower() != collection.lower():
        raise ValidationError(
            path, f"names a job of the collection {parts[0]!r}, not of the collection "
            f"{collection!r} of the request's path",
        )  # fmt: skip
    return parts[1]


def run_bulk(jobs: CollectionJobs, request: BulkRequest) -> list[JobResult]:
    """Apply `request` to each selected job of `jobs`' collection (404 for none)."""
    jobs.check()
    if request.names is not None:
        return [_by_name(jobs, request.operation, name) for name in request.names]
    where = request.where or JobFilter()
    matched = [job for job in jobs.every() if where.matches(job)]
    if len(matched) > MAX_JOBS:
        raise ValidationError(
            request.selector,
            f"selects {len(matched)} jobs; at most {MAX_JOBS} per request (narrow it, "
            "e.g. with a state, or send the names in parts)",
        )
    return [_apply(jobs, request.operation, job) for job in sorted(matched, key=lambda j: j.name)]


def _by_name(jobs: CollectionJobs, operation: BulkOperation, name: str) -> JobResult:
    try:
        job = jobs.read(name)
    except NotFoundError as exc:
        return JobResult(name, BulkOutcome.NOT_FOUND, error=exc)
    except SchedulerError as exc:  # e.g. a name no job can have
        return JobResult(name, BulkOutcome.FAILED, error=exc)
    return _apply(jobs, operation, job)


def _apply(jobs: CollectionJobs, operation: BulkOperation, job: JobRecord) -> JobResult:
    wanted = _WANTED.get(operation)
    if wanted is not None and job.state == wanted:
        return JobResult(job.name, BulkOutcome.SKIPPED, job.state, f"already {wanted}")
    work: dict[BulkOperation, Callable[[], JobRecord | None]] = {
        BulkOperation.ENABLE: lambda: jobs.set_state(job.name, JobState.ENABLED),
        BulkOperation.DISABLE: lambda: jobs.set_state(job.name, JobState.DISABLED),
        BulkOperation.RUN: lambda: jobs.run(job.name),
        BulkOperation.DELETE: lambda: jobs.delete(job.name),
    }
    try:
        after = work[operation]()
    except NotFoundError as exc:  # deleted meanwhile
        return JobResult(job.name, BulkOutcome.NOT_FOUND, error=exc)
    except SchedulerError as exc:
        return JobResult(job.name, BulkOutcome.FAILED, job.state, error=exc)
    return JobResult(job.name, BulkOutcome.SUCCEEDED, after.state if after else None)


def summary(results: list[JobResult]) -> dict[str, int]:
    """How many jobs ended with each outcome (every outcome named, 0 included)."""
    return {o.value: sum(r.outcome is o for r in results) for o in BulkOutcome}
