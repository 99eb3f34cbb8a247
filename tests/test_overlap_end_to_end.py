"""Extension 2 (concurrencyPolicy) end to end: a job created through the real API with
api-version 2026-12-01, real dispatcher ticks and the real executor over Azurite, a slow real
HTTP target. The first occurrence runs in a thread whose request the target holds until the
test releases it (an Event); the test waits for the target to have it, never sleeps."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

from scheduler_lib.execution.execute import ExecutionReport
from tests import test_end_to_end as e2e
from tests.support.http_target import HttpTarget, RecordedRequest
from tests.test_end_to_end import COLLECTION, T0, System

system, target = e2e.system, e2e.target
NEW = {"api-version": "2026-12-01"}


def test_forbid_skips_an_occurrence_while_the_previous_one_runs(
    system: System, target: HttpTarget
) -> None:
    gate = threading.Event()

    def slow(request: RecordedRequest) -> str:
        assert gate.wait(timeout=30)
        return "done"

    target.reply(200, slow, path="/report", times=1)
    url = f"{COLLECTION}/jobs/Report"
    created = system.client.put(url, params=NEW, json={"properties": {
        "startTime": "2026-03-04T09:10:00Z",
        "recurrence": {"frequency": "Hour", "interval": 1},
        "concurrencyPolicy": "Forbid",
        "action": {"type": "Http", "request": {"uri": target.url_for("/report"), "method": "GET"}},
    }})  # fmt: skip
    assert created.status_code == 201, created.text

    system.clock.now = T0 + timedelta(minutes=10)
    system.runtime.dispatcher.tick(now=system.clock.now)
    [first] = system.queue.receive(max_messages=32, visibility_timeout=60)
    done: list[ExecutionReport] = []
    runner = threading.Thread(target=lambda: done.append(
        system.runtime.execute(first.body, message_id=first.id, dequeue_count=1)
    ))  # fmt: skip
    runner.start()
    target.wait_for_requests(1)

    system.clock.now = T0 + timedelta(hours=1, minutes=10)
    [second] = system.tick_and_execute()
    assert second.disposition == "Skipped"
    gate.set()
    runner.join(timeout=30)
    system.queue.delete(first)
    assert done[0].disposition == "Ran" and len(target.requests) == 1

    def statuses(version: dict[str, Any]) -> list[tuple[str, str]]:
        entries = system.client.get(url + "/history", params=version).json()["value"]
        return sorted((h["properties"]["expectedExecutionTime"], h["properties"]["status"])
                      for h in entries)  # fmt: skip

    expected = [("2026-03-04T09:10:00Z", "Completed"), ("2026-03-04T10:10:00Z", "Skipped")]
    assert statuses(NEW) == expected
    assert statuses({"api-version": "2016-03-01"}) == expected  # listed as it is
    skipped = system.client.get(
        url + "/history", params={**NEW, "$filter": "status eq Skipped"}
    ).json()["value"]
    assert "concurrencyPolicy is Forbid" in skipped[0]["properties"]["message"]

    system.clock.now = T0 + timedelta(hours=2, minutes=10)
    [third] = system.tick_and_execute()  # nothing runs any more: it runs
    assert third.disposition == "Ran" and len(target.requests) == 2
