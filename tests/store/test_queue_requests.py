"""The execution queue's message requests through `store/queue_requests.py` (send, delete,
update, receive), against azure-storage-queue's own `QueueClient` on the same Azurite: what
each sends (read back by the SDK), what each returns (ids, pop receipts that the SDK can use,
times), and what each raises (type, status, error code, message, additional info).

The SDK's client here is made straight from the connection string, with the binary base64
policies the execution queue has always used.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from azure.core.credentials import AzureNamedKeyCredential
from azure.core.exceptions import HttpResponseError, ServiceResponseError
from azure.storage.queue import (
    BinaryBase64DecodePolicy,
    BinaryBase64EncodePolicy,
    QueueClient,
    QueueSasPermissions,
    QueueServiceClient,
    generate_queue_sas,
)

from scheduler_lib import storage_calls
from scheduler_lib.config import AZURITE_ACCOUNT, AZURITE_KEY, Settings
from scheduler_lib.storage_account import storage_connections
from scheduler_lib.storage_patience import StoragePatience
from scheduler_lib.store.execution_queue import ExecutionQueue, SentMessage
from scheduler_lib.store.queue_requests import QueueRequests, SdkQueueRequests
from scheduler_lib.transport_choice import TransportChoice
from tests.support.storage_counts import methods_since

BODY = '{"job": "é ✓ <&>"}'
WRONG_RECEIPT = "AgAAAAMAAAAAAAAA+/9=="  # base64's + / = must be quoted and signed decoded


def sdk_client(settings: Settings, name: str) -> QueueClient:
    service = QueueServiceClient.from_connection_string(str(settings.storage_connection_string))
    return service.get_queue_client(
        name,
        message_encode_policy=BinaryBase64EncodePolicy(),
        message_decode_policy=BinaryBase64DecodePolicy(),
    )


@pytest.fixture
def sdk(queue: ExecutionQueue, settings: Settings) -> QueueClient:
    return sdk_client(settings, queue.name)


@pytest.fixture
def ours(queue: ExecutionQueue) -> QueueRequests:
    assert isinstance(queue._requests, QueueRequests)
    return queue._requests


def test_a_sent_message_is_what_the_sdk_sends(queue: ExecutionQueue, sdk: QueueClient) -> None:
    theirs = sdk.send_message(BODY.encode(), time_to_live=-1)
    mine = queue.send_body(BODY)

    taken = {m.id: m for m in sdk.receive_messages(max_messages=5, visibility_timeout=30)}
    assert set(taken) == {theirs.id, mine.id}
    assert bytes(taken[mine.id].content) == bytes(taken[theirs.id].content) == BODY.encode()
    assert taken[mine.id].expires_on == taken[theirs.id].expires_on  # never: time_to_live -1
    assert taken[mine.id].inserted_on == mine.inserted_on
    assert mine.visible_on is not None and mine.visible_on.tzinfo == UTC
    assert mine.visible_on == mine.inserted_on
    assert len(mine.pop_receipt) == len(theirs.pop_receipt)


def test_a_delayed_message_is_hidden_as_long_as_the_sdks(
    queue: ExecutionQueue, sdk: QueueClient
) -> None:
    theirs = sdk.send_message(b"x", visibility_timeout=30, time_to_live=-1)
    mine = queue.send_body("x", delay_seconds=30)

    assert list(sdk.receive_messages(max_messages=5)) == []  # both hidden
    assert mine.visible_on is not None and mine.inserted_on is not None
    assert mine.visible_on - mine.inserted_on == theirs.next_visible_on - theirs.inserted_on
    assert mine.visible_on - mine.inserted_on == timedelta(seconds=30)
    sdk.delete_message(mine.id, mine.pop_receipt)  # the receipt the SDK takes
    queue.discard(SentMessage(theirs.id, theirs.pop_receipt))
    assert sdk.get_queue_properties().approximate_message_count == 0


def test_received_messages_are_what_the_sdk_receives(
    queue: ExecutionQueue, sdk: QueueClient
) -> None:
    for i in range(45):
        sdk.send_message(f"{BODY} {i}".encode(), time_to_live=-1)
    first = queue.receive(max_messages=3, visibility_timeout=30)
    pages = queue.receive(max_messages=40, visibility_timeout=30)  # two pages: 32 and 8
    rest = queue.receive(max_messages=5, visibility_timeout=30)

    assert (len(first), len(pages), len(rest)) == (3, 40, 2)
    assert [m.body for m in first + pages + rest] == [f"{BODY} {i}" for i in range(45)]
    assert {m.dequeue_count for m in first + pages + rest} == {1}
    assert queue.receive(max_messages=5) == []
    for message in first + pages + rest:
        sdk.delete_message(message.id, message.pop_receipt)
    assert sdk.get_queue_properties().approximate_message_count == 0


def test_a_release_and_a_postpone_return_what_the_sdks_update_returns(
    queue: ExecutionQueue, sdk: QueueClient
) -> None:
    for body in ("a", "b"):
        sdk.send_message(body.encode(), time_to_live=-1)
    one, two = queue.receive(max_messages=2, visibility_timeout=30)

    theirs = sdk.update_message(one.id, one.pop_receipt, visibility_timeout=60)
    released = queue.release(two, delay_seconds=60)

    assert released is not None and theirs.next_visible_on is not None
    assert abs(released - theirs.next_visible_on) <= timedelta(seconds=2)
    assert released > datetime.now(UTC) + timedelta(seconds=50)
    sent = SentMessage(one.id, str(theirs.pop_receipt))
    postponed = queue.postpone(sent, delay_seconds=120)
    assert postponed is not None and postponed.pop_receipt != sent.pop_receipt
    assert postponed.visible_on is not None
    assert postponed.visible_on > datetime.now(UTC) + timedelta(seconds=110)
    with pytest.raises(HttpResponseError) as stale:  # the old receipt is no longer the message's
        sdk.delete_message(one.id, sent.pop_receipt)
    assert stale.value.status_code == 400
    sdk.delete_message(one.id, postponed.pop_receipt)  # the new one is
    assert queue.postpone(postponed, delay_seconds=5) is None  # deleted meanwhile


def test_the_poison_queue_is_read_and_written_as_with_the_sdk(
    queue: ExecutionQueue, settings: Settings
) -> None:
    poison = sdk_client(settings, f"{queue.name}-poison")
    queue.send_body(BODY)
    [message] = queue.receive(max_messages=1, visibility_timeout=30)

    queue.move_to_poison(message)

    assert queue.receive(max_messages=5) == []
    [moved] = poison.receive_messages(max_messages=5, visibility_timeout=30)
    assert bytes(moved.content).decode() == BODY and moved.expires_on.year == 9999
    poison.send_message(b"second", time_to_live=-1)
    [taken] = queue.receive(max_messages=5, visibility_timeout=30, poisoned=True)
    assert taken.body == "second"
    queue.delete(taken, poisoned=True)
    poison.delete_message(moved.id, moved.pop_receipt)
    assert poison.get_queue_properties().approximate_message_count == 0


def _same_error(mine: Callable[[], object], theirs: Callable[[], object]) -> HttpResponseError:
    with pytest.raises(HttpResponseError) as ours_raised:
        mine()
    with pytest.raises(HttpResponseError) as sdk_raised:
        theirs()
    ours, sdks = ours_raised.value, sdk_raised.value
    assert type(ours) is type(sdks)
    assert ours.status_code == sdks.status_code
    assert ours.error_code == sdks.error_code  # type: ignore[attr-defined]
    assert type(ours.error_code) is type(sdks.error_code)  # type: ignore[attr-defined]
    assert ours.additional_info == sdks.additional_info  # type: ignore[attr-defined]
    assert _message(ours) == _message(sdks)
    return ours


def _message(error: HttpResponseError) -> list[str]:
    """An error's message less the lines that name the request (its id and time)."""
    lines = str(error.message).splitlines()
    return [line for line in lines if not line.startswith(("RequestId:", "Time:"))]


def test_each_failure_raises_what_the_sdk_raises(
    queue: ExecutionQueue, ours: QueueRequests, sdk: QueueClient, settings: Settings
) -> None:
    name = queue.name
    sdk.send_message(b"m", time_to_live=-1)
    [taken] = queue.receive(max_messages=1, visibility_timeout=30)
    wrong = _same_error(
        lambda: ours.update(name, taken.id, WRONG_RECEIPT, visibility_timeout=0),
        lambda: sdk.update_message(taken.id, WRONG_RECEIPT, visibility_timeout=0),
    )
    assert (wrong.status_code, wrong.error_code) == (400, "PopReceiptMismatch")  # type: ignore[attr-defined]
    _same_error(
        lambda: ours.delete(name, taken.id, WRONG_RECEIPT),
        lambda: sdk.delete_message(taken.id, WRONG_RECEIPT),
    )
    queue.delete(taken)
    gone = _same_error(
        lambda: ours.delete(name, taken.id, taken.pop_receipt),
        lambda: sdk.delete_message(taken.id, taken.pop_receipt),
    )
    assert (gone.status_code, gone.error_code) == (404, "MessageNotFound")  # type: ignore[attr-defined]
    _same_error(
        lambda: ours.update(name, taken.id, taken.pop_receipt, visibility_timeout=0),
        lambda: sdk.update_message(taken.id, taken.pop_receipt, visibility_timeout=0),
    )
    missing = sdk_client(settings, f"{name}-missing")
    for mine, theirs in (
        (lambda: ours.send(f"{name}-missing", b"x", visibility_timeout=None),
         lambda: missing.send_message(b"x")),
        (lambda: ours.receive(f"{name}-missing", max_messages=1, visibility_timeout=1),
         lambda: list(missing.receive_messages(max_messages=1))),
        (lambda: ours.delete(f"{name}-missing", taken.id, taken.pop_receipt),
         lambda: missing.delete_message(taken.id, taken.pop_receipt)),
    ):  # fmt: skip
        error = _same_error(mine, theirs)
        assert (error.status_code, error.error_code) == (404, "QueueNotFound")  # type: ignore[attr-defined]


def test_a_wrong_account_key_is_refused_as_the_sdks_is(
    queue: ExecutionQueue, azurite: Any, settings: Settings
) -> None:
    wrong_key = "A" * 86 + "=="
    service = queue._service
    ours = QueueRequests(
        service.url,
        AzureNamedKeyCredential(AZURITE_ACCOUNT, wrong_key),
        connections=storage_connections(settings, "queue"),
        patience=StoragePatience(retries=0),
        verify=None,
        api_version=service.api_version,
    )
    theirs = sdk_client(
        replace(
            settings,
            storage_connection_string=str(settings.storage_connection_string).replace(
                AZURITE_KEY, wrong_key
            ),
        ),
        queue.name,
    )
    refused = _same_error(
        lambda: ours.send(queue.name, b"x", visibility_timeout=None),
        lambda: theirs.send_message(b"x"),
    )
    assert refused.status_code == 403


def test_a_sas_connection_string_sends_with_its_token(
    queue: ExecutionQueue, settings: Settings, azurite: Any
) -> None:
    """A connection string with a SharedAccessSignature (no key): the service client holds
    the token in its URL and no credential; the requests carry it."""
    token = generate_queue_sas(
        AZURITE_ACCOUNT,
        queue.name,
        AZURITE_KEY,
        permission=QueueSasPermissions(read=True, add=True, update=True, process=True),
        expiry=datetime.now(UTC) + timedelta(hours=1),
    )
    endpoint = f"http://127.0.0.1:{azurite.queue_port}/{AZURITE_ACCOUNT}"
    sas = replace(
        settings,
        storage_connection_string=f"QueueEndpoint={endpoint};SharedAccessSignature={token}",
    )
    by_sas = ExecutionQueue(sas, name=queue.name)
    assert isinstance(by_sas._requests, QueueRequests)

    sent = by_sas.send_body(BODY, delay_seconds=0)
    [taken] = by_sas.receive(max_messages=5, visibility_timeout=30)
    assert (taken.id, taken.body) == (sent.id, BODY)
    assert by_sas.release(taken, delay_seconds=0) is not None
    [again] = by_sas.receive(max_messages=5, visibility_timeout=30)
    by_sas.delete(again)
    assert queue.receive(max_messages=5) == []


def test_requests_are_counted_by_stage_on_the_queue_connections(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The cost benchmark counts each request under its caller's stage, as the SDK's were:
    the adapter modules are not a stage."""
    monkeypatch.setenv(storage_calls.COUNT_CALLS_SETTING, str(tmp_path / "calls.json"))
    queue = ExecutionQueue(settings).ready()
    before = storage_calls.snapshot()

    queue.discard(queue.send_body("{}", delay_seconds=60))

    assert methods_since(before, "[queue ") == {"POST": 1, "DELETE": 1}
    grown = set(storage_calls.snapshot()) - set(before)
    assert grown and not [stage for stage in grown if "queue_requests" in stage]


def test_a_send_is_retried_after_a_connection_error_as_the_sdk_retries_it(
    settings: Settings,
) -> None:
    """azure-core's RetryPolicy retries no POST after a transport error; the queue SDK's
    policy retries every request, and a send is one to retry: a message sent twice runs once
    (the executor's claim), a message not sent is an occurrence lost. A real local server
    that takes each connection and closes it without an answer."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[int] = []

    def serve() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            accepted.append(1)
            connection.recv(65536)
            connection.close()

    threading.Thread(target=serve, daemon=True).start()
    port = server.getsockname()[1]
    try:
        ours = QueueRequests(
            f"http://127.0.0.1:{port}/{AZURITE_ACCOUNT}",
            AzureNamedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY),
            connections=storage_connections(settings, "queue"),
            patience=StoragePatience(retries=2, backoff=0.0, connect_timeout=2, read_timeout=2),
            verify=None,
            api_version="2026-10-06",
        )
        with pytest.raises(ServiceResponseError):
            ours.send("q", b"x", visibility_timeout=None)
    finally:
        server.close()
    assert len(accepted) == 3  # the first try and two retries


def test_the_operator_switch_gives_the_message_requests_back_to_the_sdk(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[str] = []
    send = QueueClient.send_message

    def spy(self: QueueClient, *args: Any, **kwargs: Any) -> Any:
        sent.append(self.queue_name)
        return send(self, *args, **kwargs)

    monkeypatch.setattr(QueueClient, "send_message", spy)
    chosen = replace(settings, storage_transport=TransportChoice.REQUESTS)
    queue = ExecutionQueue(chosen).ready()
    assert isinstance(queue._requests, SdkQueueRequests)

    kept = queue.postpone(queue.send_body(BODY), delay_seconds=0)
    assert kept is not None
    [taken] = queue.receive(max_messages=5, visibility_timeout=30)
    assert (taken.id, taken.body, taken.dequeue_count) == (kept.id, BODY, 1)
    queue.move_to_poison(taken)
    assert sent == [queue.name, f"{queue.name}-poison"]
    [poisoned] = queue.receive(max_messages=5, visibility_timeout=30, poisoned=True)
    queue.delete(poisoned, poisoned=True)
