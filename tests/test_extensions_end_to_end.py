"""Extensions 4 and 8 end to end (api-version 2026-12-01): jobs created through the real API
fire through the real dispatcher tick and the real executor, against Azurite and a real local
HTTP target, on one hand-moved clock (`tests/test_end_to_end.py`'s `System`)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from scheduler_lib.domain import job_key
from scheduler_lib.domain.messages import ExecutionMessage
from tests import test_end_to_end as e2e
from tests.support.http_target import HttpTarget
from tests.test_end_to_end import COLLECTION, RG, SUB, System

#: The same fixtures as `tests/test_end_to_end.py`: the System and an HTTP target.
system, target = e2e.system, e2e.target
NEW = {"api-version": "2026-12-01"}


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def put(running: System, path: str, properties: dict[str, Any]) -> dict[str, Any]:
    response = running.client.put(path, json={"properties": properties}, params=NEW)
    assert response.status_code in (200, 201), response.text
    return response.json()["properties"]


def get(running: System, path: str, **params: str) -> Any:
    response = running.client.get(path, params={**NEW, **params})
    assert response.status_code == 200, response.text
    return response.json()


def test_a_jittered_job_runs_at_its_jittered_second_as_its_occurrence(
    system: System, target: HttpTarget
) -> None:
    job_url = f"{COLLECTION}/jobs/Report"
    job = put(system, job_url, {
        "startTime": "2026-03-04T09:10:00Z",
        "recurrence": {"frequency": "Day", "interval": 1},
        "maxJitter": "PT4M",
        "action": {"type": "Http", "request": {"uri": target.url, "method": "GET"}},
    })  # fmt: skip
    occurrence = at("2026-03-04T09:10:00Z")
    start = at(job["status"]["nextExecutionTime"])
    assert occurrence <= start < occurrence + timedelta(minutes=4)

    # The tick lands on the jittered second (a tick earlier would send the message with a
    # real visibility delay, which a test would have to sleep through).
    system.clock.now = start
    [report] = system.tick_and_execute()

    assert report.disposition == "Ran"
    [request] = target.requests
    key = job_key(SUB, RG, "Nightly", "Report")
    assert request.header("x-ms-execution-tag") == (
        ExecutionMessage.scheduled(key, occurrence, 1).execution_tag
    )  # the occurrence's tag, as without jitter
    assert request.header("x-ms-scheduler-expected-execution-time") == "2026-03-04T09:10:00Z"
    [entry] = get(system, job_url + "/history")["value"]
    assert entry["properties"]["expectedExecutionTime"] == "2026-03-04T09:10:00Z"
    assert at(entry["properties"]["startTime"]) >= start
    tomorrow = at(get(system, job_url)["properties"]["status"]["nextExecutionTime"])
    assert occurrence + timedelta(days=1) <= tomorrow < occurrence + timedelta(days=1, minutes=4)


def test_a_job_disabled_after_consecutive_failures_says_so(
    system: System, target: HttpTarget
) -> None:
    target.reply(500, "backend down", path="/flaky", times=1)
    target.reply(200, "fine", path="/flaky", times=1)
    target.reply(500, "backend down", path="/flaky")
    job_url = f"{COLLECTION}/jobs/Flaky"
    put(system, job_url, {
        "startTime": "2026-03-04T09:10:00Z",
        "recurrence": {"frequency": "Hour", "interval": 1},
        "pauseAfterConsecutiveFailures": 2,
        "action": {
            "type": "Http",
            "request": {"uri": target.url_for("/flaky"), "method": "POST", "body": "x"},
            "retryPolicy": {"retryType": "None"},
        },
    })  # fmt: skip

    def status() -> dict[str, Any]:
        return get(system, job_url)["properties"]["status"]

    outcomes = []
    for hour in range(4):  # 09:10 fails, 10:10 succeeds, 11:10 and 12:10 fail
        system.clock.now = at("2026-03-04T09:10:00Z") + timedelta(hours=hour)
        system.tick_and_execute()
        outcomes.append(status()["consecutiveFailures"])
    assert outcomes == [1, 0, 1, 2]  # a success ends the streak

    job = get(system, job_url)["properties"]
    assert job["state"] == "Disabled"
    assert "2 occurrences in a row faulted" in job["pauseNote"]
    newest = get(system, job_url + "/history")["value"][0]["properties"]
    assert newest["status"] == "Failed" and newest["message"] == job["pauseNote"]
    assert newest["expectedExecutionTime"] == "2026-03-04T12:10:00Z"
    old = system.get(job_url)["properties"]  # 2016-03-01: Disabled, nothing more
    assert old["state"] == "disabled"
    assert "consecutiveFailures" not in old["status"] and "pauseNote" not in old

    system.clock.now += timedelta(hours=1)
    assert system.tick_and_execute() == []  # a Disabled job does not run
    assert len(target.requests) == 4

    # Enabled again, the streak starts over (the note stays until cleared).
    enabled = system.client.patch(
        job_url, json={"properties": {"state": "Enabled", "pauseNote": None}}, params=NEW
    )
    assert enabled.status_code == 200, enabled.text
    properties = enabled.json()["properties"]
    assert properties["status"]["consecutiveFailures"] == 0 and "pauseNote" not in properties
