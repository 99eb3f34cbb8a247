"""Extension 1 (retry with backoff) end to end: a job created through the real API with
api-version 2026-12-01 fires through the real dispatcher tick and executor, against Azurite
and a real local HTTP target answering 503 with `Retry-After`, on one hand-moved clock."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import timedelta

from tests import test_end_to_end as e2e
from tests.support.http_target import HttpTarget
from tests.test_end_to_end import COLLECTION, System

system, target = e2e.system, e2e.target
NEW = {"api-version": "2026-12-01"}


def test_an_exponential_job_waits_as_the_target_asks_then_jitters(
    system: System, target: HttpTarget
) -> None:
    system.runtime.executor = replace(system.runtime.executor, draw=random.Random(7).random)
    target.reply(503, "maintenance", headers={"Retry-After": "45"}, path="/api", times=1)
    target.reply(503, "still busy", path="/api", times=1)
    target.reply(200, "done", path="/api")
    job_url = f"{COLLECTION}/jobs/Sync"
    created = system.client.put(
        job_url,
        params=NEW,
        json={
            "properties": {
                "action": {
                    "type": "Http",
                    "request": {"uri": target.url_for("/api"), "method": "POST", "body": "x"},
                    "retryPolicy": {
                        "retryType": "Exponential",
                        "retryInterval": "PT20S",
                        "retryCount": 3,
                        "maxRetryInterval": "PT2M",
                        "retryOn": ["5xx", "transport"],
                    },
                },
            }
        },
    )  # fmt: skip (no startTime, no recurrence: run once, now)
    assert created.status_code == 201, created.text

    [first] = system.tick_and_execute()
    assert first.history is not None and first.follow_up is not None
    assert first.follow_up_at == first.history.end_time + timedelta(seconds=45)

    system.clock.now = first.follow_up_at
    second = system.runtime.execute(first.follow_up.to_json(), message_id="r1", dequeue_count=1)
    assert second.history is not None and second.follow_up is not None
    wait = second.follow_up_at - second.history.end_time
    expected = round(random.Random(7).random() * 40, 3)  # the seeded draw of [0, 20 s * 2]
    assert wait == timedelta(seconds=expected)

    system.clock.now = second.follow_up_at
    third = system.runtime.execute(second.follow_up.to_json(), message_id="r2", dequeue_count=1)
    assert third.history is not None and third.history.status == "Completed"

    history = system.client.get(job_url + "/history", params=NEW).json()["value"]
    rows = [(h["properties"]["status"], h["properties"]["retryCount"]) for h in history]
    assert rows == [("Completed", 2), ("Failed", 1), ("Failed", 0)]
    job = system.client.get(job_url, params=NEW).json()["properties"]
    assert job["state"] == "Completed" and job["status"]["failureCount"] == 2
