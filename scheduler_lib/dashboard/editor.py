"""Create and edit a job: the form, the raw JSON editor, saving, and the live preview.

Both editors post to one route that ends in `job_service.put_job` (the REST API's PUT), so
a job saved here is validated, quota-checked and scheduled exactly as one PUT over the API.
Errors come back inline: the ARM error's `target` picks the form field (`forms.field_of`),
and the JSON editor shows target and message above the text. The preview answers as the
user types, through the API's preview (`service/preview.preview_schedule`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from scheduler_lib.api.errors import ArmError, arm_error, http_status
from scheduler_lib.dashboard import csrf, forms
from scheduler_lib.dashboard.handlers import endpoint, mutating, page, read_form
from scheduler_lib.dashboard.pages import COLLECTION, JOB, collection_name, job_name
from scheduler_lib.dashboard.runs import jitter_label
from scheduler_lib.dashboard.web import (
    UI,
    context,
    job_url,
    json_answer,
    redirect,
    render,
    require_session,
)
from scheduler_lib.dashboard.words import FIELD, describe
from scheduler_lib.domain import CollectionRecord, JobDefinition, JobRecord
from scheduler_lib.errors import SchedulerError, ValidationError
from scheduler_lib.schedule import max_jitter
from scheduler_lib.service import jobs as job_service
from scheduler_lib.service.collections import get_collection
from scheduler_lib.service.jobs import JobName
from scheduler_lib.service.preview import preview_schedule
from scheduler_lib.wire import arm, request_json
from scheduler_lib.wire.jobs import job_to_wire, parse_job
from scheduler_lib.wire.shapes import JSONObject
from scheduler_lib.wire.timing import normalize_recurrence

router = APIRouter(include_in_schema=False)
_EXAMPLE = {"method": "GET", "frequency": "Hour", "interval": "1", "state": "Enabled"}


@router.get(COLLECTION + "/new")
@page
async def new_job(request: Request) -> Response:
    session = require_session(request)
    ctx = context(request)
    name = collection_name(request)
    record = await run_in_threadpool(get_collection, ctx, name)
    values = _editor_values(record, dict(_EXAMPLE), None, "")
    return render(request, "editor.html", values, session=session)


@router.get(JOB + "/edit")
@page
async def edit_job(request: Request) -> Response:
    session = require_session(request)
    ctx = context(request)
    name = job_name(request)
    record = await run_in_threadpool(job_service.get_job, ctx, name)
    collection = await run_in_threadpool(get_collection, ctx, collection_name(request))
    properties = job_to_wire(record, now=ctx.clock(), version=ctx.version)["properties"]
    fields = forms.from_properties(record.name, properties)
    values = _editor_values(collection, fields, record, forms.json_text(properties))
    return render(request, "editor.html", values, session=session)


class ShownError(ArmError):
    text: str  # the line the page shows (`forms.error_text`: its path once)


class PreviewAnswer(TypedDict, total=False):
    """The editor's preview: `SchedulePreview` with its errors shown, the schedule in words,
    the JSON editor's text, and with jitter the runs' labels or a note."""

    executions: list[str]
    errors: list[ShownError]
    occurrences: list[str]
    jitter: str
    endReason: str
    words: str
    json: str
    labels: list[str]
    jitterNote: str


class EditorValues(TypedDict):
    """What editor.html is rendered with."""

    collection: CollectionRecord
    fields: dict[str, str]
    job: JobRecord | None
    json: str
    mode: str
    errors: list[ShownError]
    etag: str | None
    field_errors: dict[str, str]


def _shown(errors: list[ArmError]) -> list[ShownError]:
    return [{**e, "text": forms.error_text(e)} for e in errors]


def _editor_values(collection: CollectionRecord, fields: dict[str, str], job: JobRecord | None,
                   text: str, errors: list[ArmError] | None = None, mode: str = "form",
                   ) -> EditorValues:  # fmt: skip
    shown = _shown(errors or [])
    if not text:
        text = forms.json_text(_safe_properties(fields))
    return {
        "collection": collection, "fields": fields, "job": job, "json": text, "mode": mode,
        "errors": shown, "etag": job.etag if job is not None else "",
        "field_errors": {forms.field_of(e.get("target")): e["text"] for e in shown},
    }  # fmt: skip


def _validator(ctx: Any) -> Any:
    """The checks of a PUT that need no storage (what `forms.all_errors` re-runs)."""
    return lambda properties: parse_job(properties, ctx.version)


def _safe_properties(fields: dict[str, str]) -> JSONObject:
    try:
        return forms.to_properties(fields)
    except ValidationError:
        return {}


def _properties(form: dict[str, str], base: JSONObject | None) -> JSONObject:
    """The job properties the user submitted, from whichever editor was in use."""
    if form.get("mode") == "json":
        document = request_json.parse(form.get("json", ""), "json")  # as the API reads bodies
        if isinstance(document, dict) and "properties" in document:
            return document["properties"] if isinstance(document["properties"], dict) else {}
        raise ValidationError("properties", 'is required: {"properties": {...}}')
    return forms.to_properties(form, base)


@router.post(COLLECTION + "/save")
@page
async def save(request: Request) -> Response:
    session, form = await mutating(request)
    ctx = context(request)
    where = collection_name(request)
    editing = form.get("original", "").strip()
    name = JobName(
        where.subscription_id,
        where.resource_group,
        where.collection,
        editing or form.get("name", "").strip(),
    )
    now = ctx.clock()

    base: JSONObject | None = None

    def work() -> Any:
        nonlocal base
        if editing and form.get("mode") != "json":
            base = job_to_wire(job_service.get_job(ctx, name), now=now, version=ctx.version)[
                "properties"
            ]
        body = {"properties": _properties(form, base)}
        if not name.job:
            raise ValidationError("name", "is required")
        return job_service.put_job(ctx, name, body, form.get("etag") or None, now)

    try:
        await run_in_threadpool(work)
    except SchedulerError as exc:  # shown in the editor, with what the user typed
        collection = await run_in_threadpool(get_collection, ctx, where)
        job = await run_in_threadpool(job_service.get_job, ctx, name) if editing else None
        fields = {k: form.get(k, "") for k in forms.FIELDS}
        errors = [arm_error(exc)]
        if isinstance(exc, ValidationError) and form.get("mode") != "json":
            found = await run_in_threadpool(forms.all_errors, form, exc, base, _validator(ctx))
            errors = [arm_error(error) for error in found]
        if not name.job and not any(e.get("target") == "name" for e in errors):
            errors.append(arm_error(ValidationError("name", "is required")))
        values = _editor_values(
            collection, fields, job, form.get("json", ""), errors, form.get("mode", "form")
        )
        status = http_status(exc)
        return render(request, "editor.html", values, session=session, status=status)
    url = job_url(name.subscription_id, name.resource_group, name.collection, name.job)
    return redirect(url, notice=f"Job {name.job} was saved.")


@router.post(UI + "/preview")
@endpoint
async def preview(request: Request) -> Response:
    """The next 10 runs of what the editor holds for a new job, its errors, and its
    schedule in words (with jitter: by how much each run may move)."""
    return await _preview(request, None)


@router.post(JOB + "/preview")
@endpoint
async def preview_job(request: Request) -> Response:
    """The same for an existing job: its identity is known, so with jitter the preview
    shows when each run really starts (the offsets the dispatcher will use)."""
    return await _preview(request, job_name(request))


async def _preview(request: Request, editing: JobName | None) -> Response:
    session = require_session(request)
    form = await read_form(request)
    csrf.check(request, session, request.headers.get(csrf.HEADER))
    ctx = context(request)
    now = ctx.clock()

    def work() -> PreviewAnswer:
        base = None
        body: JSONObject = {"count": 10}
        if editing is not None:
            record = job_service.get_job(ctx, editing)
            where = (editing.subscription_id, editing.resource_group, editing.collection)
            body["id"] = arm.job_id(*where, editing.job)  # whose jitter offsets it shows
            if form.get("mode") != "json":
                base = job_to_wire(record, now=now, version=ctx.version)["properties"]
        try:
            properties = _properties(form, base)
        except ValidationError as exc:
            return {"executions": [], "errors": _shown([arm_error(exc)]), "words": "", "json": ""}
        found = preview_schedule({**body, "properties": properties}, clock_now=now)
        result: PreviewAnswer = {
            **found,
            "errors": _shown([arm_error(e) for e in found["errors"]]),
            "words": "",
            "json": forms.json_text(properties),
        }
        if not result["errors"]:
            timing_only: JSONObject = {
                k: properties[k] for k in ("startTime", "recurrence") if k in properties
            }
            if "recurrence" in timing_only:
                timing_only["recurrence"] = normalize_recurrence(timing_only["recurrence"], "r")
            result["words"] = describe(JobDefinition(timing_only))
            result.update(_jitter_labels(result, properties))
        return result

    return json_answer(await run_in_threadpool(work))


def _jitter_labels(result: PreviewAnswer, properties: JSONObject) -> PreviewAnswer:
    """With jitter, each run as the job page shows it ("09:00:17 UTC (09:00 +17 s
    jitter)"), or for a job not saved yet, by how much each may move."""
    if "occurrences" in result:
        pairs = zip(result["occurrences"], result["executions"], strict=True)
        return {
            "labels": [
                jitter_label(datetime.fromisoformat(o), datetime.fromisoformat(e)) for o, e in pairs
            ]
        }
    if "jitter" in result:
        seconds = int(max_jitter(properties).total_seconds())
        return {"jitterNote": f"Each run starts up to +{seconds} s later ({FIELD.max_jitter}); the "
                "exact offsets are known once the job is saved."}  # fmt: skip
    return {}
