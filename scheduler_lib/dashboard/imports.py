"""The Import page (/api/ui/import): upload ARM JSON, Bicep, Terraform or export-bundle files,
see the dry run (each collection and job with its outcome, notes and next 5 runs), then
Apply. Both steps call the import use case the REST route calls (`service/imports.py`).

No script is needed: the upload is an ordinary multipart form, and the preview carries the
uploaded files to Apply in one hidden field, encrypted (Fernet, a key derived from the
session's secret, valid for `SEALED_FOR`): the page never holds the files' text, so a
password written in a source is not in it, and another session cannot replay it. Both
POSTs are CSRF-checked like every form of the dashboard.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import TypedDict

from cryptography.fernet import Fernet, InvalidToken
from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData, UploadFile
from starlette.requests import Request
from starlette.responses import Response

from scheduler_lib.dashboard import csrf
from scheduler_lib.dashboard.handlers import page
from scheduler_lib.dashboard.session import Session
from scheduler_lib.dashboard.web import UI, context, render, require_session
from scheduler_lib.errors import ValidationError
from scheduler_lib.service.imports import (
    MAX_FILE_BYTES,
    MAX_FILES,
    MAX_TOTAL_BYTES,
    ImportRequest,
    ItemResult,
    SourceFile,
    import_sources,
)

router = APIRouter(include_in_schema=False)
IMPORT = UI + "/import"
SEALED_FOR = 3600  # seconds an Apply may follow its preview
#: The fields the pages echo back (not `sets`: a value given there may be a secret, so it
#: travels to Apply sealed with the files and is never shown again).
_FIELDS = ("subscription", "group", "collection", "location", "replace")


def _fernet(session: Session) -> Fernet:
    key = hashlib.sha256(b"dashboard-import|" + session.secret).digest()
    return Fernet(base64.urlsafe_b64encode(key))


async def _form(request: Request) -> tuple[Session, FormData]:
    """The multipart form after the CSRF checks (the same two as every form)."""
    session = require_session(request)
    form = await request.form(max_files=MAX_FILES, max_part_size=2 * MAX_TOTAL_BYTES + 4096)
    token = form.get(csrf.FIELD)
    csrf.check(request, session, token if isinstance(token, str) else None)
    return session, form


def _text(form: FormData, name: str) -> str:
    value = form.get(name)
    return value.strip() if isinstance(value, str) else ""


def _sets(form: FormData) -> list[str]:
    sets = [line.strip() for line in _text(form, "sets").splitlines() if line.strip()]
    for index, line in enumerate(sets):
        if "=" not in line:
            raise ValidationError(f"sets[{index}]", "must be NAME=VALUE")
    return sets


def _request(
    form: FormData, files: list[SourceFile], sets: list[str], *, dry_run: bool
) -> ImportRequest:
    return ImportRequest(
        _text(form, "subscription"), files, dry_run, bool(_text(form, "replace")),
        _text(form, "group") or None, _text(form, "collection") or None, sets,
        _text(form, "location") or None,
    )  # fmt: skip


async def _uploads(form: FormData) -> list[SourceFile]:
    files = []
    for index, upload in enumerate(form.getlist("files")):
        if not isinstance(upload, UploadFile) or not upload.filename:
            continue
        data = await upload.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise ValidationError(f"files[{index}]", f"at most {MAX_FILE_BYTES} bytes")
        try:
            files.append(SourceFile(upload.filename.rsplit("/", 1)[-1], data.decode("utf-8")))
        except UnicodeDecodeError:
            raise ValidationError(f"files[{index}]", "is not UTF-8 text") from None
    if not files:
        raise ValidationError("files", "choose at least one file")
    return files


def _options(form: FormData | None) -> dict[str, str]:
    values = {name: _text(form, name) for name in _FIELDS} if form else {}
    values.setdefault("subscription", "local")
    values["subscription"] = values["subscription"] or "local"
    return values


@router.get(IMPORT)
@page
async def import_page(request: Request) -> Response:
    session = require_session(request)
    return render(request, "import.html", {"options": _options(None)}, session=session)


class ImportValues(TypedDict, total=False):
    """What import.html is rendered with after a preview or an import."""

    options: dict[str, str]
    error: str
    results: list[ItemResult]
    dry_run: bool
    files: list[str]
    sealed: str  # the previewed files, sealed for the Import button (`_unseal`)


async def _run(request: Request, *, dry_run: bool) -> Response:
    session, form = await _form(request)
    ctx = context(request)
    values: ImportValues = {"options": _options(form)}
    try:
        if dry_run:
            files, sets = await _uploads(form), _sets(form)
        else:
            files, sets = _unseal(session, _text(form, "sealed"), ctx.clock().timestamp())
        wanted = _request(form, files, sets, dry_run=dry_run)
        now = ctx.clock()
        results = await run_in_threadpool(import_sources, ctx, wanted, now=now)
    except ValidationError as exc:
        values["error"] = f"{exc.field}: {exc.message}"
        return render(request, "import.html", values, session=session, status=400)
    values.update({"results": results, "dry_run": dry_run, "files": [f.name for f in files]})
    if dry_run:
        sealed = json.dumps({"files": [[f.name, f.content] for f in files], "sets": sets}).encode()
        values["sealed"] = _fernet(session).encrypt_at_time(sealed, int(now.timestamp())).decode()
    return render(request, "import.html", values, session=session)


def _unseal(session: Session, token: str, now: float) -> tuple[list[SourceFile], list[str]]:
    try:
        data = _fernet(session).decrypt_at_time(token.encode(), SEALED_FOR, int(now))
    except InvalidToken:
        raise ValidationError("sealed", "the preview expired or is not this session's: "
                                        "upload the files again") from None  # fmt: skip
    sealed = json.loads(data)
    return [SourceFile(name, content) for name, content in sealed["files"]], sealed["sets"]


@router.post(IMPORT)
@page
async def preview(request: Request) -> Response:
    return await _run(request, dry_run=True)


@router.post(IMPORT + "/apply")
@page
async def apply(request: Request) -> Response:
    return await _run(request, dry_run=False)
