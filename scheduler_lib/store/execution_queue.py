"""The execution queue: the Storage queue between the dispatcher and the executor.

The adapter of the scheduler's own queue (Storage-queue *actions* have their own): queue
creation and `depth` through azure-storage-queue, the message requests through
`store/queue_requests.py` (the SDK's requests without its generated client: issue 22).
Messages are base64-encoded because that is what the Functions queue trigger decodes by
default. A message is sent with a visibility delay so that it appears at its occurrence's
second; Storage queues cap that delay at 7 days, so longer waits go through the due index
instead (`MAX_DELAY`).

A message that must start at an exact second (`ExecutionMessage.start_at`) is made visible
1 to 2 seconds before it (`EARLY_DELIVERY`, rounded down to the queue's whole seconds), so that
the trigger's polling interval and the executor's reads happen before that second, not after
it; the executor then waits for the second itself. Any other message becomes visible at its
time, never earlier (rounded up).

That hold is billed: an instance is executing while it waits, 1-2 s per occurrence that does
not share its instance (docs/cost.md). A deployment that does not need the second chooses
`SCHEDULER_PRECISION=minute`: every message becomes visible at its time, never earlier, and
an occurrence starts when the queue trigger takes it (its polling interval and the claim
later), without the hold and without the executor's second read of the job at the second.

Occurrences that would become visible in the same second may share one queue message
(`send_batch`, `domain.messages.batch_json`: the dispatcher's `dispatch/batch.py`): one send,
one delete, one function execution and one hold for all of them.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from contextlib import suppress
from datetime import datetime, timedelta
from functools import cached_property
from typing import Self

from azure.core.exceptions import AzureError, HttpResponseError, ResourceExistsError
from azure.storage.queue import (
    BinaryBase64DecodePolicy,
    BinaryBase64EncodePolicy,
    LinearRetry,
    QueueClient,
    QueueServiceClient,
)

from scheduler_lib.config import Settings
from scheduler_lib.domain.messages import ExecutionMessage, batch_json
from scheduler_lib.precision import Precision, window_end
from scheduler_lib.storage_account import Once, ca_bundle, service_client, storage_connections
from scheduler_lib.storage_patience import BACKGROUND, StoragePatience
from scheduler_lib.storage_transport import ConnectionPools
from scheduler_lib.store.queue_answer import ReceivedMessage, SentMessage
from scheduler_lib.store.queue_requests import QueueRequests, SdkQueueRequests
from scheduler_lib.transport_choice import TransportChoice

log = logging.getLogger("scheduler.queue")

#: The longest visibility delay Storage queues accept, less a margin for clock skew.
MAX_DELAY = timedelta(days=7) - timedelta(minutes=5)

#: A message with an exact start becomes visible at least this much (and less than a second
#: more) before it. The trigger's next poll (host.json `maxPollingInterval`, 1 s) and the
#: executor's claim (three storage round trips) fit in it; the executor waits out the rest,
#: so a message holds an executor slot for 1-2 s before its action starts.
EARLY_DELIVERY = timedelta(seconds=1)


def _client_options(patience: StoragePatience) -> dict[str, float | LinearRetry]:
    """azure-storage-queue's retry policy (a fixed delay, no jitter) and timeouts. Its
    counts per kind of failure (refused connection, lost answer, 5xx) default to 3 whatever
    `retry_total` says, so each is set too."""
    options: dict[str, float | LinearRetry] = dict(patience.transport_options())
    if patience.retries is not None:
        options["retry_policy"] = LinearRetry(
            backoff=patience.backoff,  # type: ignore[arg-type]  # typed int, takes float seconds
            retry_total=patience.retries,
            random_jitter_range=0,
            retry_connect=patience.retries,
            retry_read=patience.retries,
            retry_status=patience.retries,
        )
    return options


class ExecutionQueue:
    """Send to, and (for the local host) receive from, the execution queue, or another of
    the scheduler's own queues by `name` (the dispatch queue of control messages)."""

    def __init__(
        self,
        settings: Settings,
        *,
        patience: StoragePatience = BACKGROUND,
        name: str | None = None,
    ) -> None:
        self.settings = settings
        self.patience = patience
        self.name = name or settings.execution_queue_name
        self._ready = Once()

    def ready(self) -> Self:
        """This queue, created (with its poison queue) once per instance, on first use."""
        self._ready.run(self.ensure)
        return self

    @cached_property
    def _connections(self) -> ConnectionPools:
        return storage_connections(self.settings, "queue")

    @cached_property
    def _service(self) -> QueueServiceClient:
        return service_client(
            QueueServiceClient,
            self.settings,
            self.settings.queue_endpoint,
            connections=self._connections,
            **_client_options(self.patience),
        )

    @cached_property
    def _requests(self) -> QueueRequests | SdkQueueRequests:
        """The message requests: off the SDK's generated client on the service client's
        connections, credential and API version (`store/queue_requests.py`), or the SDK's
        own with `SCHEDULER_STORAGE_TRANSPORT=requests`. Queue creation and `depth` stay
        the SDK's."""
        service = self._service
        if self.settings.storage_transport is TransportChoice.REQUESTS:
            return SdkQueueRequests({self.name: self.client, self._name(True): self.poison})
        return QueueRequests(
            service.url,
            service.credential,
            connections=self._connections,
            patience=self.patience,
            verify=ca_bundle(),
            api_version=service.api_version,
        )

    def _client(self, name: str) -> QueueClient:
        return self._service.get_queue_client(
            name,
            message_encode_policy=BinaryBase64EncodePolicy(),
            message_decode_policy=BinaryBase64DecodePolicy(),
        )

    @cached_property
    def client(self) -> QueueClient:
        return self._client(self.name)

    @cached_property
    def poison(self) -> QueueClient:
        return self._client(f"{self.name}-poison")

    def ensure(self) -> None:
        """Create the queue and its poison queue if missing (idempotent)."""
        for client in (self.client, self.poison):
            with suppress(ResourceExistsError):
                client.create_queue()

    def send(
        self, message: ExecutionMessage, *, visible_at: datetime, now: datetime
    ) -> SentMessage:
        """Send `message` so that it becomes visible at `visible_at` (never earlier), or,
        when it has an exact start and the deployment's precision is the second, between 1
        and 2 seconds before that (`EARLY_DELIVERY`); with `minute` and a coalescing window
        (`Settings.coalesce_seconds`), at the end of its window (`precision.window_end`).

        Raises ValueError when the delay exceeds `MAX_DELAY`: such a message must be parked
        in the due index by the caller instead.
        """
        delay = self.delay_seconds(message, visible_at=visible_at, now=now)
        return self.send_body(message.to_json(), delay_seconds=delay)

    def send_batch(
        self, members: Sequence[tuple[ExecutionMessage, datetime]], *, now: datetime
    ) -> SentMessage:
        """Send `members` (each message with the `visible_at` `send` would take; 1 to
        `BATCH_LIMIT`) as one queue message (`batch_json`), visible when the first of them
        would be if sent alone: none later than alone. The dispatcher gives it messages that
        `delay_seconds` puts in the same second, so none is earlier either (by less than a
        second if `now` crossed a second meanwhile). Raises ValueError as `send` does."""
        delay = min(self.delay_seconds(m, visible_at=at, now=now) for m, at in members)
        return self.send_body(batch_json([m for m, _ in members]), delay_seconds=delay)

    def delay_seconds(
        self, message: ExecutionMessage, *, visible_at: datetime, now: datetime
    ) -> int:
        """The whole seconds after `now` that `send` makes `message` visible at (see `send`;
        what the dispatcher groups a batch's members by)."""
        delay = visible_at - now
        if delay > MAX_DELAY:
            raise ValueError(f"delay {delay} exceeds the queue's limit; park it in the due index")
        if message.start_at is not None and self.settings.precision is Precision.SECOND:
            return max(0, math.floor((delay - EARLY_DELIVERY).total_seconds()))
        if message.start_at is not None and self.settings.coalesce_seconds:
            delay = window_end(visible_at, self.settings.coalesce_seconds) - now
        return max(0, math.ceil(delay.total_seconds()))

    def send_body(self, body: str, *, delay_seconds: int = 0) -> SentMessage:
        """Send a message as it is (an execution message's JSON, a control message, one sent
        again), visible after `delay_seconds`."""
        visibility = max(0, delay_seconds) or None
        return self._requests.send(self.name, body.encode(), visibility_timeout=visibility)

    def discard(self, sent: SentMessage) -> None:
        """Delete a message this worker sent and no longer needs, if it still can (one that
        became visible and was taken meanwhile has another pop receipt: it stays, and its
        handler finds it has nothing to do)."""
        try:
            self._requests.delete(self.name, sent.id, sent.pop_receipt)
        except AzureError as exc:
            log.debug("message %s not discarded: %s", sent.id, type(exc).__name__)

    def postpone(self, sent: SentMessage, *, delay_seconds: int) -> SentMessage | None:
        """Hide a message this worker sent for `delay_seconds` more from now (a watchdog
        kept hidden while its worker lives): the same message under its new pop receipt, or
        None when it is no longer this worker's to change (it became visible and was taken,
        or was deleted). Any other failure raises (the caller tries again later)."""
        try:
            receipt, visible_on = self._requests.update(
                self.name, sent.id, sent.pop_receipt, visibility_timeout=max(0, delay_seconds)
            )
        except HttpResponseError as exc:
            if exc.status_code not in (400, 404):  # PopReceiptMismatch, MessageNotFound
                raise
            return None
        return SentMessage(sent.id, receipt or sent.pop_receipt, visible_on, sent.inserted_on)

    def receive(
        self, *, max_messages: int = 16, visibility_timeout: int = 300, poisoned: bool = False
    ) -> list[ReceivedMessage]:
        """Take up to `max_messages` visible messages, hidden for `visibility_timeout` s
        (from the poison queue with `poisoned`)."""
        return self._requests.receive(
            self._name(poisoned), max_messages=max_messages, visibility_timeout=visibility_timeout
        )

    def _source(self, poisoned: bool) -> QueueClient:
        return self.poison if poisoned else self.client

    def _name(self, poisoned: bool) -> str:
        return f"{self.name}-poison" if poisoned else self.name

    def depth(self, *, poisoned: bool = False) -> int:
        """Approximately how many messages the queue (or its poison queue) holds, those not
        yet visible included (a retry waiting, an occurrence sent a minute ahead)."""
        properties = self._source(poisoned).get_queue_properties()
        return int(properties.approximate_message_count or 0)

    def delete(self, message: ReceivedMessage, *, poisoned: bool = False) -> None:
        self._requests.delete(self._name(poisoned), message.id, message.pop_receipt)

    def release(
        self, message: ReceivedMessage, *, delay_seconds: int, poisoned: bool = False
    ) -> datetime | None:
        """Make a message that failed visible again after `delay_seconds`; returns when the
        queue service says it will be (for the log)."""
        _, visible_on = self._requests.update(
            self._name(poisoned), message.id, message.pop_receipt, visibility_timeout=delay_seconds
        )
        return visible_on

    def move_to_poison(self, message: ReceivedMessage) -> None:
        """What the Functions host does after `maxDequeueCount` failed attempts."""
        self._requests.send(self._name(True), message.body.encode(), visibility_timeout=None)
        self.delete(message)
