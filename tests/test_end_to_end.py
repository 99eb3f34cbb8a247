"""End to end: jobs created through the real API (uvicorn, real HTTP) fire through the real
dispatcher tick and the real executor, against Azurite and a real local HTTP target.

Time is driven, never slept through: the API's clock, the dispatcher's `now` and the
executor's clock are the same hand-moved instant. The queue trigger is played by receiving
from the ExecutionQueue and handing each message to the real `Runtime` (built with the driven
clock) with its id and dequeue count, as `function_app.py` does.
Service Bus actions stop at the SDK's `ServiceBusSender` boundary: no Service Bus emulator
runs here, so the sender factory hands the executor a recording sender.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from scheduler_lib.config import AZURITE_ACCOUNT, Settings
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution.execute import ExecutionReport
from scheduler_lib.runtime import Runtime
from tests.support.api_server import ManualClock, serve
from tests.support.azurite_queues import new_queue, sas_token
from tests.support.http_target import HttpTarget

T0 = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
SUB, RG = "5f3c2a1e-0000-4000-8000-00000000abcd", "Ops-RG"
COLLECTION = (
    f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler/jobCollections/Nightly"
)


class System:
    """The API, the dispatcher and the executor over one Azurite, on one driven clock."""

    def __init__(
        self, runtime: Runtime, client: httpx.Client, clock: ManualClock, adapters: dict[str, Any]
    ) -> None:
        self.runtime = runtime
        self.settings = runtime.settings
        self.client = client
        self.clock = clock
        self.store = runtime.store
        self.queue = runtime.queue
        self.adapters = adapters  # what the runtime's executor hands every action

    def put(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        response = self.client.put(path, json=body)
        assert response.status_code in (200, 201), response.text
        return response.json()

    def get(self, path: str) -> dict[str, Any]:
        response = self.client.get(path)
        assert response.status_code == 200, response.text
        return response.json()

    def record_service_bus(self) -> tuple[list[Any], list[Any]]:
        """Stand where `ServiceBusSender` stands (there is no Service Bus emulator): the
        (messages sent, their `ServiceBusTarget`s) lists every Service Bus action fills."""
        sent: list[Any] = []
        targets: list[Any] = []

        class RecordingSender:
            def send_messages(self, message: Any, timeout: float | None = None) -> None:
                sent.append(message)

        @contextmanager
        def sender_factory(target: Any) -> Iterator[RecordingSender]:
            targets.append(target)
            yield RecordingSender()

        self.adapters["sender_factory"] = sender_factory
        return sent, targets

    def tick_and_execute(self) -> list[ExecutionReport]:
        """One dispatcher tick at the clock's instant, then every visible message executed."""
        self.runtime.dispatcher.tick(now=self.clock.now)
        return self.execute_visible()

    def execute_visible(self) -> list[ExecutionReport]:
        """Every visible message executed as the queue trigger does (a batch message's
        members at once: occurrences of one second share one), each member's report."""
        reports = []
        for received in self.queue.receive(max_messages=32, visibility_timeout=60):
            reports += self.runtime.execute_queued(
                received.body, message_id=received.id, dequeue_count=received.dequeue_count
            )
            self.queue.delete(received)
        return reports


@pytest.fixture
def system(settings: Settings) -> Iterator[System]:
    clock = ManualClock(T0)
    adapters: dict[str, Any] = {}
    runtime = Runtime(settings, clock=clock, sleep=clock.sleep, action_adapters=adapters)
    runtime.ensure_storage()
    with (
        serve(runtime.api) as server,
        httpx.Client(
            base_url=server.api_url,
            headers={"Authorization": "Bearer test-key"},
            params={"api-version": "2016-03-01"},
            timeout=30,
        ) as client,
    ):
        running = System(runtime, client, clock, adapters)
        running.put(COLLECTION, {"location": "westeurope", "properties": {}})
        yield running


@pytest.fixture
def target() -> Iterator[HttpTarget]:
    with HttpTarget() as server:
        yield server


def test_next_execution_time_shows_an_occurrence_sent_ahead_until_its_second(
    system: System, target: HttpTarget
) -> None:
    """A tick sends the occurrences of the minute ahead and advances the job past them; the
    API still reports the sent occurrence as next until it is due."""
    job_url = f"{COLLECTION}/jobs/Every-Minute"
    system.put(job_url, {"properties": {
        "startTime": "2026-03-04T09:10:30Z",
        "recurrence": {"frequency": "Minute", "interval": 1},
        "action": {"type": "Http", "request": {"uri": target.url, "method": "GET"}},
    }})  # fmt: skip

    system.clock.now = datetime(2026, 3, 4, 9, 9, 30, tzinfo=UTC)
    report = system.runtime.dispatcher.tick(now=system.clock.now)
    assert report.messages_sent == 1

    def next_execution() -> str:
        return system.get(job_url)["properties"]["status"]["nextExecutionTime"]

    assert next_execution() == "2026-03-04T09:10:30Z"
    [listed] = system.get(f"{COLLECTION}/jobs")["value"]
    assert listed["properties"]["status"]["nextExecutionTime"] == "2026-03-04T09:10:30Z"
    system.clock.now = datetime(2026, 3, 4, 9, 10, 31, tzinfo=UTC)
    assert next_execution() == "2026-03-04T09:11:30Z"


def test_next_execution_time_is_the_earliest_occurrence_not_started_with_two_in_flight(
    system: System, target: HttpTarget
) -> None:
    """An every-minute job created at 09:00:29.5 runs at once (09:00:30) and its 09:01:30 is
    in the look-ahead minute too: both are sent, the job advanced past both. Until each
    starts, GET, list and the PUT response itself show the earliest one (issue 11)."""
    job_url = f"{COLLECTION}/jobs/Two-In-Flight"
    system.clock.now = datetime(2026, 3, 4, 9, 0, 29, 500_000, tzinfo=UTC)
    created = system.put(job_url, {"properties": {
        "recurrence": {"frequency": "Minute", "interval": 1},
        "action": {"type": "Http", "request": {"uri": target.url, "method": "GET"}},
    }})  # fmt: skip
    in_flight = system.queue.client.get_queue_properties().approximate_message_count
    assert in_flight == 2  # both occurrences were sent by the PUT's immediate dispatch

    def shown() -> tuple[str, str]:
        [listed] = system.get(f"{COLLECTION}/jobs")["value"]
        return (
            system.get(job_url)["properties"]["status"]["nextExecutionTime"],
            listed["properties"]["status"]["nextExecutionTime"],
        )

    assert created["properties"]["status"]["nextExecutionTime"] == "2026-03-04T09:00:30Z"
    assert shown() == ("2026-03-04T09:00:30Z",) * 2
    system.clock.now = datetime(2026, 3, 4, 9, 0, 30, tzinfo=UTC)
    assert shown() == ("2026-03-04T09:01:30Z",) * 2
    system.clock.now = datetime(2026, 3, 4, 9, 1, 5, tzinfo=UTC)
    system.runtime.dispatcher.tick(now=system.clock.now)  # 09:02:30
    assert shown() == ("2026-03-04T09:01:30Z",) * 2
    system.clock.now = datetime(2026, 3, 4, 9, 1, 30, tzinfo=UTC)
    assert shown() == ("2026-03-04T09:02:30Z",) * 2


def test_a_schedule_changed_after_an_occurrence_ran_never_runs_it_again(
    system: System, target: HttpTarget
) -> None:
    """Racing ticks can send one occurrence twice. If the user changes the schedule between
    the two deliveries, the second must still be recognised as a duplicate."""
    job_url = f"{COLLECTION}/jobs/Nightly"
    props = {
        "startTime": "2026-03-04T09:05:00Z",
        "recurrence": {"frequency": "Hour", "interval": 1},
        "action": {"type": "Http", "request": {"uri": target.url, "method": "POST"}},
    }
    system.put(job_url, {"properties": props})
    system.clock.now = datetime(2026, 3, 4, 9, 5, tzinfo=UTC)
    [ran] = system.tick_and_execute()
    assert ran.disposition == "Ran"

    props["startTime"], props["recurrence"] = "2026-03-04T10:30:00Z", {"frequency": "Day"}
    system.put(job_url, {"properties": props})
    again = ExecutionMessage.scheduled(ran.job_key, datetime(2026, 3, 4, 9, 5, tzinfo=UTC), 1)
    duplicate = system.runtime.execute(again.to_json(), message_id="second-copy", dequeue_count=1)

    assert duplicate.disposition == "Duplicate"
    assert len(target.requests) == 1


def test_an_http_job_fires_on_schedule_until_its_count_completes_it(
    system: System, target: HttpTarget
) -> None:
    job_url = f"{COLLECTION}/jobs/Ping-Backend"
    system.put(job_url, {"properties": {
        "startTime": "2026-03-04T09:05:00Z",
        "recurrence": {"frequency": "Hour", "interval": 1, "count": 2},
        "action": {
            "type": "Http",
            "request": {
                "uri": target.url_for("/hooks/backup?source=scheduler"),
                "method": "PUT",
                "headers": {"Content-Type": "application/json"},
                "body": '{"what": "backup"}',
                "authentication": {"type": "Basic", "username": "ops", "password": "s3cret!"},
            },
        },
    }})  # fmt: skip

    # Ticks land on the due instants: a tick up to a minute earlier sends the occurrence with a
    # real visibility delay (the look-ahead), which a test would have to sleep through. For
    # the same reason the job starts beyond the look-ahead of its creation (09:00, when the
    # API would dispatch it itself) and its occurrences are an hour apart, not a minute.
    system.clock.advance(timedelta(minutes=3))  # 09:03: nothing due yet
    assert system.tick_and_execute() == []
    assert target.requests == []

    system.clock.advance(timedelta(minutes=2))  # 09:05
    [first] = system.tick_and_execute()
    assert first.disposition == "Ran"
    [request] = target.requests
    assert (request.method, request.path) == ("PUT", "/hooks/backup?source=scheduler")
    assert request.json() == {"what": "backup"}
    assert request.header("Content-Type") == "application/json"
    assert request.header("Authorization") == "Basic " + base64.b64encode(b"ops:s3cret!").decode()
    assert request.header("x-ms-scheduler-jobid") == job_url
    assert request.header("x-ms-scheduler-jobcollectionid") == COLLECTION
    assert request.header("x-ms-scheduler-expected-execution-time") == "2026-03-04T09:05:00Z"
    assert request.header("x-ms-execution-tag") == first.execution_tag

    job = system.get(job_url)["properties"]
    assert job["state"] == "enabled"  # 2016-03-01's spelling
    assert job["status"] == {
        "executionCount": 1,
        "failureCount": 0,
        "faultedCount": 0,
        "lastExecutionTime": "2026-03-04T09:05:00Z",
        "nextExecutionTime": "2026-03-04T10:05:00Z",
    }

    system.clock.advance(timedelta(hours=1))  # 10:05, the second and last execution
    [second] = system.tick_and_execute()
    assert second.job_state == "Completed"
    job = system.get(job_url)["properties"]
    assert job["state"] == "completed"
    assert job["status"]["executionCount"] == 2 and "nextExecutionTime" not in job["status"]

    history = system.get(job_url + "/history")["value"]
    assert [h["properties"]["repeatCount"] for h in history] == [2, 1]  # newest first
    newest = history[0]["properties"]
    assert (newest["status"], newest["actionName"], newest["retryCount"]) == (
        "Completed", "MainAction", 0,
    )  # fmt: skip
    assert newest["expectedExecutionTime"] == "2026-03-04T10:05:00Z"
    assert "'200'" in newest["message"] and "s3cret!" not in newest["message"]

    system.clock.advance(timedelta(minutes=5))
    assert system.tick_and_execute() == [] and len(target.requests) == 2


def test_a_failing_job_retries_runs_its_error_action_and_faults(
    system: System, target: HttpTarget
) -> None:
    target.reply(500, "backend down", path="/main")
    job_url = f"{COLLECTION}/jobs/Fragile"
    system.put(
        job_url,
        {
            "properties": {
                "action": {
                    "type": "Http",
                    "request": {"uri": target.url_for("/main"), "method": "POST", "body": "x"},
                    "retryPolicy": {
                        "retryType": "Fixed",
                        "retryInterval": "PT15S",
                        "retryCount": 1,
                    },
                    "errorAction": {
                        "type": "Http",
                        "request": {
                            "uri": target.url_for("/alert"),
                            "method": "POST",
                            "body": "down",
                        },
                    },
                },
            }
        },
    )  # fmt: skip (no startTime, no recurrence: run once, now)

    [attempt] = system.tick_and_execute()
    assert attempt.history.status == "Failed" and attempt.follow_up is not None
    # The retry waits in the queue, invisible for its 15 seconds: nothing to execute yet.
    assert system.queue.client.get_queue_properties().approximate_message_count == 1
    assert system.execute_visible() == []

    # Play the retry as the trigger will once it is visible (the queue's real delay is not
    # slept through; the retry's own message is handed over instead).
    system.clock.advance(timedelta(seconds=15))
    retry = system.runtime.execute(
        attempt.follow_up.to_json(), message_id="retry-1", dequeue_count=1
    )
    assert retry.history.status == "Failed" and retry.follow_up.action == "ErrorAction"
    [alert] = system.execute_visible()  # the errorAction is visible at once
    assert alert.history.action_name == "ErrorAction" and alert.history.status == "Completed"
    assert [r.path for r in target.requests] == ["/main", "/main", "/alert"]
    assert target.requests[-1].text == "down"

    job = system.get(job_url)["properties"]
    assert job["state"] == "faulted"
    assert {k: job["status"][k] for k in ("executionCount", "failureCount", "faultedCount")} == {
        "executionCount": 2, "failureCount": 2, "faultedCount": 1,
    }  # fmt: skip
    failed = system.client.get(job_url + "/history", params={"$filter": "status eq Failed"})
    assert [h["properties"]["retryCount"] for h in failed.json()["value"]] == [1, 0]


def test_run_now_executes_without_touching_the_schedule(system: System, target: HttpTarget) -> None:
    job_url = f"{COLLECTION}/jobs/Daily"
    system.put(job_url, {"properties": {
        "startTime": "2026-03-05T06:00:00Z",
        "recurrence": {"frequency": "Day"},
        "action": {"type": "Http", "request": {"uri": target.url, "method": "GET"}},
    }})  # fmt: skip

    assert system.client.post(job_url + "/run").status_code == 200
    [report] = system.execute_visible()

    assert report.disposition == "Ran" and len(target.requests) == 1
    job = system.get(job_url)["properties"]
    assert job["state"] == "enabled"  # 2016-03-01's spelling
    assert job["status"]["nextExecutionTime"] == "2026-03-05T06:00:00Z"
    assert job["status"]["executionCount"] == 1
    [entry] = system.get(job_url + "/history")["value"]
    assert entry["properties"]["repeatCount"] == 0


def test_a_storage_queue_job_lands_in_an_azurite_queue(system: System) -> None:
    name = f"{system.settings.storage_prefix}-inbox"
    inbox = new_queue(system.settings, name)
    sas = sas_token(name)
    system.put(f"{COLLECTION}/jobs/Enqueue", {"properties": {"action": {
        "type": "StorageQueue",
        "queueMessage": {
            "storageAccount": AZURITE_ACCOUNT, "queueName": name, "sasToken": sas,
            "message": "rebuild the index",
        },
    }}})  # fmt: skip

    [report] = system.tick_and_execute()

    assert report.history.status == "Completed"
    assert [m.content for m in inbox.receive_messages()] == ["rebuild the index"]
    job = system.get(f"{COLLECTION}/jobs/Enqueue")["properties"]
    assert job["state"] == "completed"


def test_a_storage_queue_job_without_a_sas_token_uses_the_apps_credential(
    system: System,
) -> None:
    """No secret in the job: the app's own account (Azurite's here) is reached with the app's
    credential (the connection string locally, the managed identity in Azure)."""
    name = f"{system.settings.storage_prefix}-keyless"
    inbox = new_queue(system.settings, name)
    system.put(f"{COLLECTION}/jobs/Keyless", {"properties": {"action": {
        "type": "StorageQueue",
        "queueMessage": {"storageAccount": AZURITE_ACCOUNT, "queueName": name, "message": "hi"},
    }}})  # fmt: skip

    [report] = system.tick_and_execute()

    assert report.history.status == "Completed", report.history.message
    assert [m.content for m in inbox.receive_messages()] == ["hi"]


def test_a_service_bus_job_reaches_the_sender_boundary(system: System) -> None:
    sent, targets = system.record_service_bus()
    system.put(f"{COLLECTION}/jobs/Publish", {"properties": {"action": {
        "type": "ServiceBusTopic",
        "serviceBusTopicMessage": {
            "namespace": "contoso", "topicPath": "events", "transportType": "AMQP",
            "authentication": {"type": "SharedAccessKey", "sasKeyName": "send", "sasKey": "k3y"},
            "message": "tick",
        },
    }}})  # fmt: skip

    [report] = system.tick_and_execute()

    assert report.history.status == "Completed"
    assert [(t.entity_kind, t.entity_name) for t in targets] == [("topic", "events")]
    assert [str(m) for m in sent] == ["tick"]
