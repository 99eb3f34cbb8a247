"""The dead-man switch end to end (api-version 2026-12-01): a job every five minutes with
`alertIfNoSuccessWithin: PT2M` whose target is down; the real API, dispatcher tick (with its
upkeep), executor and notifications function over Azurite, on a hand-moved clock, and a real
local HTTP receiver for the notifications. Nothing sleeps (tests/notify/helpers.py)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from scheduler_lib.store import current_deadline, due_deadlines, overdue_jobs
from tests import test_end_to_end as e2e
from tests.notify.helpers import (
    NEW,
    every_five_minutes,
    minute,
    new_secret,
    put_job,
    signature_ok,
    status,
)
from tests.support.http_target import HttpTarget
from tests.test_end_to_end import COLLECTION, T0, System

system, target = e2e.system, e2e.target
OLD = {"api-version": "2016-03-01"}


@pytest.fixture
def receiver() -> Iterator[HttpTarget]:
    with HttpTarget() as server:
        yield server


def events(receiver: HttpTarget) -> list[str]:
    return [r.json()["data"]["event"] for r in receiver.requests]


def at(minutes: int) -> timedelta:
    return timedelta(minutes=minutes)


def watched(running: System) -> list[str]:
    table = running.store.table("JobDeadlines")
    return [e["RowKey"] for e in table.query_entities("PartitionKey eq 'job'")]


def test_a_dead_target_makes_one_missed_then_one_recovered(
    system: System, target: HttpTarget, receiver: HttpTarget
) -> None:
    secret = new_secret()
    target.reply(503, "down", path="/job", times=3)  # 09:05, 09:10, 09:15 fail; 09:20 not
    put_job(system, "Heartbeat", every_five_minutes(
        target.url_for("/job"), T0 + at(5), alertIfNoSuccessWithin="PT2M",
        notifications=[{"url": receiver.url_for("/hook"), "events": ["Missed", "Recovered"],
                        "secret": secret}],
    ))  # fmt: skip
    assert status(system, "Heartbeat")["health"] == "Healthy"

    for m in range(1, 7):
        minute(system, T0 + at(m))
    assert events(receiver) == []  # failed at 09:05, but not 2 minutes without success yet
    assert status(system, "Heartbeat")["health"] == "Failing"

    for m in range(7, 20):
        minute(system, T0 + at(m))
    assert events(receiver) == ["Missed"]  # once (09:07), however long it stays down
    assert status(system, "Heartbeat")["health"] == "Overdue"
    [missed] = receiver.requests
    assert signature_ok(secret, missed)
    assert missed.header("webhook-id") == f"msg_{missed.json()['data']['id']}"
    assert missed.json()["type"] == "scheduler.job.missed"
    assert missed.json()["timestamp"] == "2026-03-04T09:07:00Z"
    assert missed.json()["data"]["job"]["name"] == "Heartbeat"
    assert missed.json()["data"]["health"] == "Overdue"
    [(overdue_key, since)] = overdue_jobs(system.store)  # what the overview lists first
    assert overdue_key.endswith("|heartbeat") and since == T0 + at(7)

    for m in range(20, 25):  # 09:20 succeeds: the target is back
        minute(system, T0 + at(m))
    assert events(receiver) == ["Missed", "Recovered"]
    assert status(system, "Heartbeat")["health"] == "Healthy"
    assert overdue_jobs(system.store) == []
    assert signature_ok(secret, receiver.requests[1])
    old = system.client.get(f"{COLLECTION}/jobs/Heartbeat", params=OLD).json()
    assert "health" not in old["properties"]["status"]  # 2016-03-01 has no such field


def test_a_job_that_keeps_succeeding_is_judged_once_per_window(
    system: System, target: HttpTarget, receiver: HttpTarget
) -> None:
    """The upkeep reads only deadlines that passed: a healthy job's row moves to its last
    success plus the window, so most ticks read nothing at all for it."""
    put_job(system, "Fine", every_five_minutes(
        target.url, T0 + at(5), alertIfNoSuccessWithin="PT20M",
        notifications=[{"url": receiver.url, "events": ["Missed"]}],
    ))  # fmt: skip
    judged = []
    for m in range(1, 26):
        judged.append(len(due_deadlines(system.store, now=T0 + at(m), limit=100)))
        minute(system, T0 + at(m))
    assert receiver.requests == []
    assert status(system, "Fine")["health"] == "Healthy"
    # Armed at creation for 09:20, judged then (the tick's upkeep runs before its
    # executions: the last success is 09:15's) and moved to 09:35: once in 25 minutes.
    assert sum(judged) == 1
    [job_key] = watched(system)
    deadline = current_deadline(system.store, job_key)
    assert deadline is not None and deadline.startswith("2026-03-04T09:35:00Z")


def test_a_disabled_job_is_not_overdue_and_is_no_longer_watched(
    system: System, target: HttpTarget, receiver: HttpTarget
) -> None:
    target.reply(500, path="/job")
    put_job(system, "Off", every_five_minutes(
        target.url_for("/job"), T0 + at(5), alertIfNoSuccessWithin="PT2M",
        notifications=[{"url": receiver.url, "events": ["Missed"]}],
    ))  # fmt: skip
    assert len(watched(system)) == 1
    response = system.client.patch(
        f"{COLLECTION}/jobs/Off", json={"properties": {"state": "Disabled"}}, params=NEW
    )
    assert response.status_code == 200, response.text
    for m in range(1, 12):
        minute(system, T0 + at(m))
    assert receiver.requests == []
    assert watched(system) == []


def test_the_collection_default_watches_its_jobs(
    system: System, target: HttpTarget, receiver: HttpTarget
) -> None:
    target.reply(500, path="/job")
    put_job(system, "Inherits", every_five_minutes(target.url_for("/job"), T0 + at(5)))
    assert watched(system) == []
    response = system.client.patch(
        COLLECTION,
        json={"properties": {
            "alertIfNoSuccessWithin": "PT3M",
            "notifications": [{"url": receiver.url, "events": ["Missed"], "format": "Json"}],
        }},
        params=NEW,
    )  # fmt: skip
    assert response.status_code == 200, response.text
    assert len(watched(system)) == 1
    for m in range(1, 12):
        minute(system, T0 + at(m))
    assert events(receiver) == ["Missed"]
    assert "3 minute" in receiver.requests[0].json()["data"]["detail"]


def test_a_job_of_a_disabled_collection_is_not_overdue(
    system: System, target: HttpTarget, receiver: HttpTarget
) -> None:
    put_job(system, "Idle", every_five_minutes(
        target.url, T0 + at(5), alertIfNoSuccessWithin="PT2M",
        notifications=[{"url": receiver.url, "events": ["Missed"]}],
    ))  # fmt: skip
    assert system.client.post(f"{COLLECTION}/disable", params=NEW).status_code == 200
    for m in range(1, 12):
        minute(system, T0 + at(m))
    assert receiver.requests == []
    assert status(system, "Idle")["health"] == "Healthy"
