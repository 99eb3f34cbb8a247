"""The Table service's answer to an entity-group transaction, read without the `email`
package (`store/changeset.py` says why): the multipart/mixed batch response, whose one part
is the changeset's multipart answer, one HTTP response per operation (or, when the
changeset failed, the failed operation's alone); and the SDK's exceptions made from an
error answer as azure-data-tables' `_decode_error` makes them (same types, messages,
`error_code`, `additional_info`; `TableTransactionError.index` from the message's prefix).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from azure.core.exceptions import (
    ClientAuthenticationError,
    DecodeError,
    HttpResponseError,
    ResourceExistsError,
    ResourceModifiedError,
    ResourceNotFoundError,
)
from azure.core.pipeline.policies import ContentDecodePolicy
from azure.core.utils import CaseInsensitiveDict
from azure.data.tables import TableErrorCode

#: The exception of an error code, as the SDK maps them (any other: HttpResponseError).
_ERRORS: dict[TableErrorCode, type[HttpResponseError]] = {
    TableErrorCode.CONDITION_NOT_MET: ResourceModifiedError,
    TableErrorCode.UPDATE_CONDITION_NOT_SATISFIED: ResourceModifiedError,
    TableErrorCode.INVALID_AUTHENTICATION_INFO: ClientAuthenticationError,
    TableErrorCode.AUTHENTICATION_FAILED: ClientAuthenticationError,
    TableErrorCode.RESOURCE_NOT_FOUND: ResourceNotFoundError,
    TableErrorCode.TABLE_NOT_FOUND: ResourceNotFoundError,
    TableErrorCode.ENTITY_NOT_FOUND: ResourceNotFoundError,
    TableErrorCode.RESOURCE_ALREADY_EXISTS: ResourceExistsError,
    TableErrorCode.TABLE_ALREADY_EXISTS: ResourceExistsError,
    TableErrorCode.ACCOUNT_ALREADY_EXISTS: ResourceExistsError,
    TableErrorCode.ENTITY_ALREADY_EXISTS: ResourceExistsError,
}


class PartResponse:
    """One operation's HTTP answer inside the changeset: what the SDK's errors read of a
    response (status, reason, headers, text)."""

    request = None

    def __init__(self, status_code: int, reason: str, headers: CaseInsensitiveDict, body: str):
        self.status_code = status_code
        self.reason = reason
        self.headers = headers
        self._body = body

    @property
    def content_type(self) -> str | None:
        return self.headers.get("Content-Type")

    @property
    def content(self) -> bytes:
        return self._body.encode("utf-8")

    def body(self) -> bytes:
        return self.content

    def text(self, encoding: str | None = None) -> str:
        return self._body


def read_parts(content: bytes, content_type: str) -> list[PartResponse]:
    """The operations' answers in a batch response (`content_type` names its boundary)."""
    text = content.decode("utf-8").replace("\r\n", "\n")
    answers: list[PartResponse] = []
    for part in _split(text, _boundary(content_type)):
        headers, _, rest = part.partition("\n\n")
        inner = _headers(headers.split("\n")).get("Content-Type", "")
        if inner.lower().startswith("multipart/mixed"):
            answers.extend(_http(p.partition("\n\n")[2]) for p in _split(rest, _boundary(inner)))
        else:
            answers.append(_http(rest))
    return answers


def _boundary(content_type: str) -> str:
    for parameter in content_type.split(";")[1:]:
        name, _, value = parameter.strip().partition("=")
        if name.lower() == "boundary":
            return value.strip('"')
    raise DecodeError(f"A multipart answer without a boundary: {content_type!r}")


def _split(text: str, boundary: str) -> Iterator[str]:
    """The parts between `--boundary` lines, up to the closing `--boundary--`."""
    for segment in text.split(f"--{boundary}")[1:]:
        if segment.startswith("--"):
            return
        yield segment.removeprefix("\n").removesuffix("\n")


def _http(message: str) -> PartResponse:
    head, _, body = message.partition("\n\n")
    status_line, *lines = head.split("\n")
    _, status, reason = [*status_line.split(" ", 2), ""][:3]
    return PartResponse(int(status), reason, _headers(lines), body)


def _headers(lines: list[str]) -> CaseInsensitiveDict:
    headers: CaseInsensitiveDict = CaseInsensitiveDict()
    for line in lines:
        name, colon, value = line.partition(":")
        if colon:
            headers[name.strip()] = value.strip()
    return headers


def decode_error(
    response: Any, message: str | None = None, error_type: type[HttpResponseError] | None = None
) -> HttpResponseError:
    """The SDK's exception for an error answer (`_decode_error` in azure-data-tables)."""
    code: Any = response.headers.get("x-ms-error-code")
    try:
        body = ContentDecodePolicy.deserialize_from_http_generics(response)
    except DecodeError:
        body = None
    if isinstance(body, dict):
        error = body.get("odata.error", {})
        code = error.get("code", code)
        message = error.get("message", {}).get("value", message)
    elif body is not None:  # XML
        for info in body.iter():
            if "code" in info.tag.lower():
                code = info.text
            elif "message" in info.tag.lower():
                message = info.text
    if error_type is None:
        try:
            code = TableErrorCode(code)
            error_type = _ERRORS.get(code, HttpResponseError)
        except ValueError:
            error_type = HttpResponseError
    exc = error_type(
        message=f"{message}\nErrorCode:{getattr(code, 'value', code)}", response=response
    )
    exc.error_code = code  # type: ignore[attr-defined]  # set by the SDK on its errors too
    exc.additional_info = {}  # type: ignore[attr-defined]  # idem
    return exc
