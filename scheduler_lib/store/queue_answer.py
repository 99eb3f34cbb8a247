"""The Queue service's answers to the execution queue's message requests, read as
azure-storage-queue reads them (`store/queue_requests.py` says why they are not sent through
it): the messages a Put Message or Get Messages answer lists (XML, read with xml.etree; the
text base64-decoded as `BinaryBase64DecodePolicy` decodes it), the new pop receipt and next
visible time of an Update Message answer, and the SDK's exceptions made from an error answer
as its `process_storage_error` makes them (same types, message, `error_code` and
`additional_info`: ResourceNotFoundError for a missing queue or message, HttpResponseError
with `PopReceiptMismatch` for a pop receipt that is no longer the message's,
ClientAuthenticationError for a signature the service refuses).

`SentMessage` and `ReceivedMessage` are what `ExecutionQueue` hands its callers, whichever
client sent the request.
"""

from __future__ import annotations

import base64
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime
from xml.etree import ElementTree

from azure.core.exceptions import (
    ClientAuthenticationError,
    DecodeError,
    HttpResponseError,
    ResourceExistsError,
    ResourceModifiedError,
    ResourceNotFoundError,
)
from azure.core.pipeline.policies import ContentDecodePolicy
from azure.core.rest import HttpResponse
from azure.storage.queue import StorageErrorCode


@dataclass(frozen=True)
class SentMessage:
    """A message this worker sent: what it needs to delete it while it is not yet visible."""

    id: str
    pop_receipt: str
    #: When the queue service says it becomes visible (None: not told).
    visible_on: datetime | None = None
    inserted_on: datetime | None = None


@dataclass(frozen=True)
class ReceivedMessage:
    """A message taken from the queue, as the queue trigger would hand it over."""

    id: str
    pop_receipt: str
    dequeue_count: int
    body: str


#: The exception the SDK's generated layer raises for a status (`map_error`); the SDK then
#: keeps it, with the code the answer's body names.
_BY_STATUS: dict[int, type[HttpResponseError]] = {
    401: ClientAuthenticationError,
    404: ResourceNotFoundError,
    409: ResourceExistsError,
}
_C = StorageErrorCode
#: Otherwise the exception of the error code, as `process_storage_error` maps the codes.
_CODES: tuple[tuple[type[HttpResponseError], tuple[StorageErrorCode, ...]], ...] = (
    (ResourceModifiedError, (_C.CONDITION_NOT_MET, _C.BLOB_OVERWRITTEN)),
    (ClientAuthenticationError, (_C.INVALID_AUTHENTICATION_INFO, _C.AUTHENTICATION_FAILED)),
    (ResourceNotFoundError, (
        _C.RESOURCE_NOT_FOUND, _C.CANNOT_VERIFY_COPY_SOURCE, _C.BLOB_NOT_FOUND,
        _C.QUEUE_NOT_FOUND, _C.CONTAINER_NOT_FOUND, _C.PARENT_NOT_FOUND, _C.SHARE_NOT_FOUND,
    )),
    (ResourceExistsError, (
        _C.ACCOUNT_ALREADY_EXISTS, _C.ACCOUNT_BEING_CREATED, _C.RESOURCE_ALREADY_EXISTS,
        _C.RESOURCE_TYPE_MISMATCH, _C.BLOB_ALREADY_EXISTS, _C.QUEUE_ALREADY_EXISTS,
        _C.CONTAINER_ALREADY_EXISTS, _C.CONTAINER_BEING_DELETED, _C.QUEUE_BEING_DELETED,
        _C.SHARE_ALREADY_EXISTS, _C.SHARE_BEING_DELETED,
    )),
)  # fmt: skip
_BY_CODE = {code: error for error, codes in _CODES for code in codes}


def sent_message(answer: HttpResponse) -> SentMessage:
    """The message a Put Message answer (201) lists."""
    [message] = ElementTree.fromstring(answer.content)
    return SentMessage(
        _text(message, "MessageId"),
        _text(message, "PopReceipt"),
        _date(message.findtext("TimeNextVisible")),
        _date(message.findtext("InsertionTime")),
    )


def received_messages(answer: HttpResponse) -> list[ReceivedMessage]:
    """The messages a Get Messages answer (200) lists, their text base64-decoded and read as
    UTF-8 (`DecodeError`, as the SDK's, for text that is not base64)."""
    received = []
    for message in ElementTree.fromstring(answer.content):
        text = message.findtext("MessageText") or ""
        try:
            content = base64.b64decode(text.encode("utf-8")) if text else b""
        except (ValueError, TypeError) as error:
            raise DecodeError(
                message="Message content is not valid base 64.", response=answer, error=error
            ) from error
        count = message.findtext("DequeueCount")
        received.append(
            ReceivedMessage(
                _text(message, "MessageId"),
                message.findtext("PopReceipt") or "",
                int(count) if count else 1,
                content.decode(),
            )
        )
    return received


def updated(answer: HttpResponse) -> tuple[str | None, datetime | None]:
    """An Update Message answer's (204) new pop receipt and next visible time."""
    return answer.headers.get("x-ms-popreceipt"), _date(
        answer.headers.get("x-ms-time-next-visible")
    )


def queue_error(answer: HttpResponse) -> HttpResponseError:
    """The exception azure-storage-queue raises for an error answer."""
    cls = _BY_STATUS.get(answer.status_code)
    code: str | None = answer.headers.get("x-ms-error-code")
    message = f"Operation returned an invalid status '{answer.reason}'"
    additional: dict[str, str | None] = {}
    try:
        body = ContentDecodePolicy.deserialize_from_http_generics(answer)
    except DecodeError:
        body = None
    if isinstance(body, ElementTree.Element) and len(body):
        fields = {child.tag.lower(): child.text for child in body}
        code, message = fields.pop("code", None), fields.pop("message", None) or ""
        additional = fields
    elif not body and not code:
        message = answer.reason or ""
    if cls is None:
        cls = HttpResponseError
        with suppress(ValueError):  # an unknown code stays a string, as in the SDK
            code = StorageErrorCode(code)
            cls = _BY_CODE.get(code, HttpResponseError)
    message += f"\nErrorCode:{code.value if isinstance(code, StorageErrorCode) else code}"
    message += "".join(f"\n{name}:{info}" for name, info in additional.items())
    error = cls(message=message, response=answer)
    error.error_code = code  # type: ignore[attr-defined]  # as the SDK sets them
    error.additional_info = additional  # type: ignore[attr-defined]  # idem
    error.args = (error.message,)
    return error


def _text(element: ElementTree.Element, tag: str) -> str:
    return element.findtext(tag) or ""


def _date(text: str | None) -> datetime | None:
    """An RFC 1123 time ("Thu, 26 Nov 2026 20:25:43 GMT") as the SDK reads it (UTC)."""
    return parsedate_to_datetime(text) if text else None
