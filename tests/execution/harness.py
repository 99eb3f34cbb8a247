"""Shared pieces of the executor's tests: a fake clock, jobs in real Azurite tables, and a
driver that hands messages to the real `Runtime` (built with the test's clock) the way the
queue trigger does.

Not a test module (no `test_` prefix); the fixtures are imported by the executor's test files.
"""

from __future__ import annotations

import random
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from functools import cached_property
from typing import Any

import pytest

from scheduler_lib.config import Settings
from scheduler_lib.domain import Bookkeeping, JobDefinition, JobRecord
from scheduler_lib.domain.collections import CollectionRecord
from scheduler_lib.domain.messages import ExecutionMessage, batch_json
from scheduler_lib.execution.execute import ExecutionReport
from scheduler_lib.runtime import Runtime
from scheduler_lib.store.collections import put_collection
from scheduler_lib.store.execution_queue import ExecutionQueue
from scheduler_lib.store.history import HistoryEntry, list_history
from scheduler_lib.store.jobs import find_job, put_job
from scheduler_lib.store.tables import TableStore
from tests.support.http_target import HttpTarget

T0 = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
SUB, RG, COLL = "Sub-1234", "My-RG", "Nightly-Jobs"


class FakeClock:
    """A clock the test moves; every reading advances it by `tick` so that start < end.
    Thread-safe: a batch's members read it from threads of their own."""

    def __init__(self, now: datetime = T0, tick: timedelta = timedelta(milliseconds=250)):
        self.now = now
        self.tick = tick
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            value = self.now
            self.now += self.tick
            return value

    def advance(self, delta: timedelta) -> None:
        with self._lock:
            self.now += delta

    def sleep(self, seconds: float) -> None:
        """What the executor calls to wait for an exact start: time passes, at once."""
        self.advance(timedelta(seconds=seconds))


@pytest.fixture
def target() -> Iterator[HttpTarget]:
    with HttpTarget() as server:
        yield server


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def http_action(url: str, **extra: Any) -> dict[str, Any]:
    """A stored (normalized) Http action calling `url` with a POST."""
    action: dict[str, Any] = {
        "type": "Http",
        "request": {"uri": url, "method": "POST", "body": "ping"},
        "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT30S", "retryCount": 4},
    }
    action.update(extra)
    return action


def make_job(  # the default job has more occurrences to come
    store: TableStore,
    action: dict[str, Any],
    *,
    name: str = "Backup-Job",
    state: str = "Enabled",
    occurrences: int = 1,
    next_execution_time: datetime | None = T0 + timedelta(days=1),
    collection_state: str = "Enabled",
    recurrence: dict[str, Any] | None = None,
    collection: str = COLL,
) -> JobRecord:
    put_collection(
        store,
        CollectionRecord(SUB, RG, collection, "westeurope", properties={"state": collection_state}),
    )
    definition: dict[str, Any] = {"startTime": T0.isoformat(), "action": action}
    if recurrence is not None:
        definition["recurrence"] = recurrence
    record = JobRecord(
        SUB, RG, collection, name, JobDefinition(definition), created_time=T0 - timedelta(hours=1),
        state=state,
        next_execution_time=next_execution_time, bookkeeping=Bookkeeping(occurrences=occurrences),
    )  # fmt: skip
    return put_job(store, record)


@dataclass
class Driver:
    """Hands messages to the executor as the queue trigger would, with fresh message ids."""

    store: TableStore
    queue: ExecutionQueue
    settings: Settings
    clock: FakeClock
    adapters: dict[str, Any] = field(default_factory=dict)
    #: The executor's random source (an Exponential retry's jitter): seeded, so repeatable.
    draw: Callable[[], float] = field(default_factory=lambda: random.Random(14).random)

    @cached_property
    def runtime(self) -> Runtime:
        """The worker's real composition root, on the test's clock (`adapters` is shared, so
        a test may add one after the driver is built) and with the seeded random source."""
        runtime = Runtime(
            self.settings, clock=self.clock, sleep=self.clock.sleep, action_adapters=self.adapters
        )
        runtime.executor = replace(runtime.executor, draw=self.draw)
        return runtime

    def run(
        self, message: ExecutionMessage, *, message_id: str | None = None, dequeue_count: int = 1
    ) -> ExecutionReport:
        message_id = message_id or uuid.uuid4().hex
        return self.execute(message.to_json(), message_id=message_id, dequeue_count=dequeue_count)

    def execute(self, body: str, *, message_id: str, dequeue_count: int = 1) -> ExecutionReport:
        """What the queue trigger does with one message body."""
        return self.runtime.execute(body, message_id=message_id, dequeue_count=dequeue_count)

    def run_batch(
        self, messages: list[ExecutionMessage], *, message_id: str = "batch-1",
        dequeue_count: int = 1,
    ) -> list[ExecutionReport]:  # fmt: skip
        """What the queue trigger does with one queue message carrying `messages`."""
        return self.runtime.execute_queued(
            batch_json(messages), message_id=message_id, dequeue_count=dequeue_count
        )

    def job(self, key: str) -> JobRecord:
        record = find_job(self.store, key)
        assert record is not None
        return record

    def history(self, key: str) -> list[HistoryEntry]:
        """The job's history, oldest first."""
        entries, _ = list_history(self.store, key, page_size=1000)
        return list(reversed(entries))

    def queued(self) -> list[ExecutionMessage]:
        """Take every visible message off the execution queue (deleting them)."""
        taken = []
        for received in self.queue.receive(max_messages=32, visibility_timeout=60):
            taken.append(ExecutionMessage.from_json(received.body))
            self.queue.delete(received)
        return taken

    def queue_length(self) -> int:
        return self.queue.client.get_queue_properties().approximate_message_count


@pytest.fixture
def driver(
    store: TableStore, queue: ExecutionQueue, settings: Settings, clock: FakeClock
) -> Driver:
    return Driver(store, queue, settings, clock)


@pytest.fixture
def late_driver(driver: Driver) -> Driver:
    """The driver with a grace period of 30 s, so that lateness is easy to reach."""
    driver.settings = replace(driver.settings, grace_period=timedelta(seconds=30))
    return driver
