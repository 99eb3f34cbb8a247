"""Helpers for the dispatcher tests: real jobs in real (Azurite) storage, real queues.

Jobs are written the way the API writes them (`put_job` + `add_due`, `occurrences` = 0,
`nextExecutionTime` = the schedule's first execution), with definitions in Azure
Scheduler's JSON shape. `RecordingQueue` is a real `ExecutionQueue` (every message really
goes to the Azurite queue) that also remembers what was sent, and can be told to fail after
N sends, so tests can inject a crash half-way through a tick.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from scheduler_lib.config import Settings
from scheduler_lib.domain import Bookkeeping, JobDefinition, JobRecord
from scheduler_lib.domain.collections import CollectionRecord
from scheduler_lib.domain.keys import split_job_key
from scheduler_lib.domain.messages import ExecutionMessage, batch_json
from scheduler_lib.schedule.recurrence import parse_schedule
from scheduler_lib.store.collections import put_collection
from scheduler_lib.store.due_index import add_due, due_rows
from scheduler_lib.store.execution_queue import ExecutionQueue
from scheduler_lib.store.jobs import delete_job, get_job, put_job
from scheduler_lib.store.tables import TableStore

SUB, RG = "0000-sub", "rg1"
T0 = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)  # a minute boundary; tests run around it


def definition(
    start: datetime,
    frequency: str | None = "Hour",
    *,
    interval: int = 1,
    count: int | None = None,
    end_time: datetime | None = None,
) -> dict[str, Any]:
    """An HTTP job's properties as a client sends them (Azure Scheduler JSON)."""
    props: dict[str, Any] = {
        "startTime": start.isoformat().replace("+00:00", "Z"),
        "action": {
            "type": "Http",
            "request": {"method": "POST", "uri": "http://127.0.0.1:9/hook", "body": "ping"},
            "retryPolicy": {"retryType": "None"},
        },
    }
    if frequency is not None:
        recurrence: dict[str, Any] = {"frequency": frequency, "interval": interval}
        if count is not None:
            recurrence["count"] = count
        if end_time is not None:
            recurrence["endTime"] = end_time.isoformat().replace("+00:00", "Z")
        props["recurrence"] = recurrence
    return props


def make_collection(
    store: TableStore, name: str = "c1", *, enabled: bool = True, state: str | None = None
) -> str:
    """Create (or replace) a collection (`state`: Enabled or Disabled as `enabled` says, or
    as given); returns its name."""
    state = state or ("Enabled" if enabled else "Disabled")
    put_collection(
        store,
        CollectionRecord(SUB, RG, name, "westeurope", properties={"state": state}),
    )
    return name


def make_job(
    store: TableStore,
    name: str,
    props: dict[str, Any],
    *,
    created: datetime = T0,
    collection: str = "c1",
    state: str = "Enabled",
) -> JobRecord:
    """Store a job as the API does: next execution = the schedule's first, due row added."""
    first = parse_schedule(props, now=created).first()
    record = put_job(
        store,
        JobRecord(
            SUB,
            RG,
            collection,
            name,
            definition=JobDefinition(props),
            created_time=created,
            state=state,
            next_execution_time=first,
            bookkeeping=Bookkeeping(occurrences=0),
        ),
    )
    if first is not None:
        add_due(store, record.key, first)
    return record


def make_jobs(store: TableStore, n: int, due: datetime) -> list[JobRecord]:
    """`n` hourly jobs (`j000`, `j001`, ...) whose first occurrence is at `due`."""
    return [make_job(store, f"j{i:03d}", definition(due)) for i in range(n)]


def reload(store: TableStore, job: JobRecord) -> JobRecord:
    return get_job(store, *split_job_key(job.key))


def set_job(store: TableStore, job: JobRecord, **changes: Any) -> JobRecord:
    """Change a stored job (unconditionally), as another writer would."""
    current = reload(store, job)
    if isinstance(changes.get("definition"), dict):  # the stored JSON, as another writer has it
        changes["definition"] = JobDefinition(changes["definition"])
    return put_job(store, replace(current, **changes))


def recreated_on_send(
    store: TableStore, old: JobRecord, due: datetime
) -> Callable[[ExecutionMessage], None]:
    """A `RecordingQueue` hook: when the tick sends `old`'s message (incarnation "first"),
    the API deletes the job and creates it again as incarnation "second", due at `due`."""

    def api_deletes_and_creates_again(message: ExecutionMessage) -> None:
        if message.incarnation == "first":
            delete_job(store, reload(store, old), etag=None)
            put_job(store, replace(old, incarnation="second", etag=None), create_only=True)
            add_due(store, old.key, due, incarnation="second")

    return api_deletes_and_creates_again


def all_rows(store: TableStore) -> list[tuple[str, datetime]]:
    """Every due-index row as (row key, due), oldest first."""
    rows = due_rows(
        store, start=datetime(2000, 1, 1, tzinfo=UTC), through=datetime(2100, 1, 1, tzinfo=UTC)
    )
    return sorted((r.row_key, r.due) for r in rows)


class SimulatedCrash(BaseException):
    """Not an Exception: like a killed worker, nothing in the tick may catch it."""


@dataclass(frozen=True)
class Sent:
    message: ExecutionMessage
    body: str
    visible_at: datetime
    now: datetime


class RecordingQueue(ExecutionQueue):
    """The real execution queue, remembering each message it really sent: every execution
    message in `sent` (a batch's members each as it would be alone), every queue message's
    body in `bodies` (a batch once).

    `fail_after=N` makes every queue message after the first N (a batch is one) raise
    `failure` (an Exception: a storage outage; `SimulatedCrash`: the worker dies);
    `fail_batches=N` makes the first N batches fail alone. `crash_after_send=True` raises
    only after the message was really sent (a crash between send and advance). `on_send`
    runs after each real send, for each member of a batch (to change a job in between, as
    another writer would)."""

    def __init__(
        self,
        settings: Settings,
        *,
        fail_after: int | None = None,
        failure: type[BaseException] = ConnectionError,
        crash_after_send: bool = False,
        on_send: Any = None,
        fail_batches: int = 0,
    ) -> None:
        super().__init__(settings)
        self.sent: list[Sent] = []
        self.bodies: list[str] = []
        self.fail_after = fail_after
        self.failure = failure
        self.crash_after_send = crash_after_send
        self.on_send = on_send
        self.fail_batches = fail_batches
        self._lock = threading.Lock()
        self._attempts = 0

    def send(self, message: ExecutionMessage, *, visible_at: datetime, now: datetime) -> Any:
        return self._record(
            [(message, visible_at)],
            now,
            message.to_json(),
            lambda: super(RecordingQueue, self).send(message, visible_at=visible_at, now=now),
        )

    def send_batch(
        self, members: Sequence[tuple[ExecutionMessage, datetime]], *, now: datetime
    ) -> Any:
        with self._lock:
            failing, self.fail_batches = self.fail_batches > 0, max(0, self.fail_batches - 1)
        if failing:
            raise self.failure("injected failure of a batch")
        body = batch_json([m for m, _ in members])
        return self._record(
            list(members),
            now,
            body,
            lambda: super(RecordingQueue, self).send_batch(members, now=now),
        )

    def _record(
        self, members: list[tuple[ExecutionMessage, datetime]], now: datetime, body: str, send: Any
    ) -> Any:
        with self._lock:
            self._attempts += 1
            failing = self.fail_after is not None and self._attempts > self.fail_after
        if failing and not self.crash_after_send:
            raise self.failure("injected failure before sending")
        result = send()
        with self._lock:
            self.sent += [Sent(m, m.to_json(), at, now) for m, at in members]
            self.bodies.append(body)
        if self.on_send is not None:
            for message, _ in members:
                self.on_send(message)
        if failing:
            raise self.failure("injected failure after sending")
        return result

    def tags(self) -> set[str]:
        return {s.message.execution_tag for s in self.sent}
