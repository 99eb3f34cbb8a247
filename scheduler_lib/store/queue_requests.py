"""The execution queue's message requests (Put, Get, Update and Delete Message) sent as
azure-storage-queue sends them, without its generated client (issue 22, docs/cost.md "Queue
requests without the SDK's generated client").

Why: every occurrence's message is sent, then deleted (and a watchdog's kept hidden, the
local host's polls get messages): through the SDK each of those requests cost ~0.74 ms of
client CPU, twice a bare signed request, most of it its generated operation layer (request
builders, the XML model serializer and deserializer, header deserialization, error maps),
its encode and decode policies and a pipeline of policies a message request needs few of.

`QueueRequests` sends on `storage_pipeline` (`store/storage_pipeline.py`, as the Table
requests do): the queue service client's connections (counted by stage), CA bundle,
credential and API version, the same retries and timeouts (`StoragePatience`). The requests
are the SDK's (verb, address and query, `x-ms-version`, the XML body with the base64 text
`BinaryBase64EncodePolicy` writes), and so are the answers (`store/queue_answer.py`) and the
errors. The credential as the service client holds it: its account key signed with the
Blob/Queue SharedKey form on each try (`QueueSharedKey`), a SAS from a SAS connection string,
or the managed identity's token. As the SDK's retry policy does (and azure-core's does not
for POST), a Put Message is retried after a connection error too: a message sent twice is
run once (the executor's claim), one not sent is an occurrence lost.

`SdkQueueRequests` is the same four requests through the SDK's own `QueueClient`:
`ExecutionQueue` uses it with `SCHEDULER_STORAGE_TRANSPORT=requests`, the operator's way back.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from datetime import datetime
from typing import Any
from urllib.parse import quote, unquote

from azure.core.credentials import AzureNamedKeyCredential, AzureSasCredential
from azure.core.pipeline import PipelineRequest
from azure.core.pipeline.policies import SansIOHTTPPolicy
from azure.core.rest import HttpRequest, HttpResponse
from azure.storage.queue import QueueClient

from scheduler_lib.storage_patience import StoragePatience
from scheduler_lib.storage_transport import ConnectionPools
from scheduler_lib.store.queue_answer import (
    ReceivedMessage,
    SentMessage,
    queue_error,
    received_messages,
    sent_message,
    updated,
)
from scheduler_lib.store.storage_pipeline import signature, storage_pipeline

#: The methods retried after a transport error: all, as azure-storage-queue's retry policy.
RETRIED = frozenset({"GET", "PUT", "POST", "DELETE", "HEAD", "OPTIONS", "TRACE"})
#: Get Messages takes at most 32 messages per request.
PAGE = 32
#: The start of a Put Message body, as the SDK writes it (its XML serializer's declaration).
_XML = "<?xml version='1.0' encoding='utf-8'?>\n"
#: The headers the Blob/Queue SharedKey signature covers, after the verb and in this order.
_SIGNED = ("Content-Encoding", "Content-Language", "Content-Length", "Content-MD5",
           "Content-Type", "Date", "If-Modified-Since", "If-Match", "If-None-Match",
           "If-Unmodified-Since", "Range")  # fmt: skip


class QueueRequests:
    """Message requests to one storage account's Queue service (`url`: the service client's,
    with a SAS connection string's token as its query)."""

    def __init__(
        self,
        url: str,
        credential: Any,
        *,
        connections: ConnectionPools,
        patience: StoragePatience,
        verify: str | None,
        api_version: str,
    ) -> None:
        base, _, sas = url.partition("?")
        if credential is None and sas:
            credential = AzureSasCredential(sas)
        elif hasattr(credential, "account_key"):  # the SDK's own SharedKey policy
            credential = AzureNamedKeyCredential(credential.account_name, credential.account_key)
        self.base = base.rstrip("/")
        self.version = api_version
        self._pipeline = storage_pipeline(
            self.base,
            credential,
            shared_key=QueueSharedKey,
            connections=connections,
            patience=patience,
            verify=verify,
            moniker="scheduler-queue",
        )

    def send(self, queue: str, content: bytes, *, visibility_timeout: int | None) -> SentMessage:
        """`QueueClient.send_message(content, visibility_timeout=..., time_to_live=-1)` with
        the SDK's binary base64 encoding: the message sent, never expiring."""
        query = "messagettl=-1"
        if visibility_timeout is not None:
            query = f"visibilitytimeout={visibility_timeout}&{query}"
        text = base64.b64encode(content).decode("utf-8")  # as BinaryBase64EncodePolicy
        body = f"{_XML}<QueueMessage><MessageText>{text}</MessageText></QueueMessage>"
        headers = {"Content-Type": "application/xml", "Accept": "application/xml"}
        answer = self._send("POST", f"{queue}/messages?{query}", headers, body.encode("utf-8"))
        if answer.status_code != 201:
            raise queue_error(answer)
        return sent_message(answer)

    def delete(self, queue: str, message_id: str, pop_receipt: str) -> None:
        """`QueueClient.delete_message`."""
        answer = self._send("DELETE", _message(queue, message_id, pop_receipt), {})
        if answer.status_code != 204:
            raise queue_error(answer)

    def update(
        self, queue: str, message_id: str, pop_receipt: str, *, visibility_timeout: int
    ) -> tuple[str | None, datetime | None]:
        """`QueueClient.update_message` without content: the message's new pop receipt and
        when it becomes visible."""
        address = _message(queue, message_id, pop_receipt)
        answer = self._send("PUT", f"{address}&visibilitytimeout={visibility_timeout}", {})
        if answer.status_code != 204:
            raise queue_error(answer)
        return updated(answer)

    def receive(
        self, queue: str, *, max_messages: int, visibility_timeout: int
    ) -> list[ReceivedMessage]:
        """`QueueClient.receive_messages(messages_per_page=min(max_messages, 32),
        max_messages=max_messages, visibility_timeout=...)`, taken in full: pages of at most
        32 until `max_messages`, or a page shorter than asked for (the SDK's pager asks
        once more, for the empty page that follows: a request for each poll that finds a
        few messages; the callers that drain a queue ask again anyway)."""
        received: list[ReceivedMessage] = []
        per_page = min(max_messages, PAGE)
        while len(received) < max_messages:
            count = min(per_page, max_messages - len(received))
            query = f"numofmessages={count}&visibilitytimeout={visibility_timeout}"
            answer = self._send("GET", f"{queue}/messages?{query}", {"Accept": "application/xml"})
            if answer.status_code != 200:
                raise queue_error(answer)
            page = received_messages(answer)
            received += page
            if len(page) < count:
                break
        return received

    def _send(
        self, method: str, path: str, headers: dict[str, str], body: bytes | None = None
    ) -> HttpResponse:
        request = HttpRequest(method, f"{self.base}/{path}", content=body,
                              headers={"x-ms-version": self.version, **headers})  # fmt: skip
        return self._pipeline.send_request(request, retry_on_methods=RETRIED)


def _message(queue: str, message_id: str, pop_receipt: str) -> str:
    return f"{queue}/messages/{quote(message_id, safe='')}?popreceipt={quote(pop_receipt, safe='')}"


class QueueSharedKey(SansIOHTTPPolicy[HttpRequest, HttpResponse]):
    """The Blob and Queue services' SharedKey authorization (Microsoft's "Authorize with
    Shared Key"): an HMAC-SHA256, with the account key, of the verb, the standard headers
    of `_SIGNED` (Content-Length empty when 0), the request's x-ms- headers (lower-cased,
    sorted, `name:value`) and the canonicalized resource: /account/path, then each query
    parameter, sorted, as `\\nname:value` decoded. Azurite checks it as the service does
    (tests/store/test_queue_requests.py, a wrong key)."""

    def __init__(self, credential: AzureNamedKeyCredential) -> None:
        self._credential = credential

    def on_request(self, request: PipelineRequest[HttpRequest]) -> None:
        http = request.http_request
        name, key = self._credential.named_key
        headers = http.headers
        standard = [headers.get(header) or "" for header in _SIGNED]
        if standard[2] == "0":
            standard[2] = ""
        ms = sorted((k.lower(), v) for k, v in headers.items() if k.lower().startswith("x-ms-"))
        path, _, query = http.url.split("://", 1)[-1].partition("/")[2].partition("?")
        parameters = sorted(p.partition("=")[::2] for p in query.split("&") if p)
        signed = "\n".join((http.method, *standard, "")) + "".join(f"{k}:{v}\n" for k, v in ms)
        signed += f"/{name}/{path}" + "".join(f"\n{k.lower()}:{unquote(v)}" for k, v in parameters)
        headers["Authorization"] = f"SharedKey {name}:{signature(key, signed)}"


class SdkQueueRequests:
    """The same requests through azure-storage-queue's own `QueueClient` of each queue
    (`clients`: each queue's client by name, with the binary base64 policies)."""

    def __init__(self, clients: Mapping[str, QueueClient]) -> None:
        self._client = clients.__getitem__

    def send(self, queue: str, content: bytes, *, visibility_timeout: int | None) -> SentMessage:
        sent = self._client(queue).send_message(
            content, visibility_timeout=visibility_timeout, time_to_live=-1
        )
        return SentMessage(sent.id, sent.pop_receipt or "", sent.next_visible_on, sent.inserted_on)

    def delete(self, queue: str, message_id: str, pop_receipt: str) -> None:
        self._client(queue).delete_message(message_id, pop_receipt)

    def update(
        self, queue: str, message_id: str, pop_receipt: str, *, visibility_timeout: int
    ) -> tuple[str | None, datetime | None]:
        answer = self._client(queue).update_message(
            message_id, pop_receipt, visibility_timeout=visibility_timeout
        )
        return answer.pop_receipt, answer.next_visible_on

    def receive(
        self, queue: str, *, max_messages: int, visibility_timeout: int
    ) -> list[ReceivedMessage]:
        received = self._client(queue).receive_messages(
            messages_per_page=min(max_messages, PAGE),
            max_messages=max_messages,
            visibility_timeout=visibility_timeout,
        )
        return [
            ReceivedMessage(
                m.id, m.pop_receipt or "", m.dequeue_count or 1, bytes(m.content).decode()
            )
            for m in received
        ]
