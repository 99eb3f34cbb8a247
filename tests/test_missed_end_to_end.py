"""Extension 3 (missed runs on purpose) end to end: jobs created through the real API with
api-version 2026-12-01, a dispatcher tick after "downtime" (the hand-moved clock jumps past
the grace period), the real executor, Azurite and a real local HTTP target; and
`POST .../backfill` queuing past occurrences that the executor then runs."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from scheduler_lib.domain import job_key
from scheduler_lib.domain.messages import ExecutionMessage
from tests import test_end_to_end as e2e
from tests.support.http_target import HttpTarget
from tests.test_end_to_end import COLLECTION, RG, SUB, T0, System

system, target = e2e.system, e2e.target
NEW = {"api-version": "2026-12-01"}


def create(running: System, name: str, target: HttpTarget, **extra: Any) -> str:
    url = f"{COLLECTION}/jobs/{name}"
    response = running.client.put(url, params=NEW, json={"properties": {
        "startTime": "2026-03-04T09:10:00Z",
        "recurrence": {"frequency": "Minute", "interval": 10},
        "action": {"type": "Http", "request": {"uri": target.url_for("/" + name), "method": "GET"}},
        **extra,
    }})  # fmt: skip
    assert response.status_code == 201, response.text
    return url


def tag(name: str, occurrence: datetime) -> str:
    key = job_key(SUB, RG, "Nightly", name)
    return ExecutionMessage.scheduled(key, occurrence, 1).execution_tag


def history(running: System, url: str) -> list[dict[str, Any]]:
    response = running.client.get(url + "/history", params=NEW)
    assert response.status_code == 200, response.text
    return [h["properties"] for h in reversed(response.json()["value"])]


def after_downtime(running: System) -> None:
    """The scheduler was down from 09:05 to 09:47: the 09:10 ... 09:40 occurrences are missed."""
    running.clock.now = T0 + timedelta(minutes=5)
    assert running.tick_and_execute() == []  # the last tick before the outage
    running.clock.now = T0 + timedelta(minutes=47)
    running.tick_and_execute()
    running.execute_visible()


def test_run_latest_runs_the_latest_missed_occurrence_once(
    system: System, target: HttpTarget
) -> None:
    url = create(system, "Latest", target, missedRunPolicy="RunLatest")
    after_downtime(system)

    [request] = target.requests_to("/Latest")
    latest = T0 + timedelta(minutes=40)
    assert request.header("x-ms-execution-tag") == tag("Latest", latest)
    postponed, ran = sorted(history(system, url), key=lambda h: h["status"] != "Postponed")
    assert postponed["status"] == "Postponed" and "Running 1 of them late" in postponed["message"]
    assert ran["status"] == "Completed" and ran["message"].startswith("[CatchUp] ")
    assert ran["expectedExecutionTime"] == "2026-03-04T09:40:00Z"
    job = system.client.get(url, params=NEW).json()["properties"]
    assert job["status"]["nextExecutionTime"] == "2026-03-04T09:50:00Z"


def test_run_all_runs_the_missed_occurrences_inside_the_window(
    system: System, target: HttpTarget
) -> None:
    url = create(system, "All", target, missedRunPolicy="RunAll", catchUpWindow="PT20M")
    skip_url = create(system, "Skip", target)  # the default: today's behaviour
    after_downtime(system)

    # The window reaches back to 09:27: 09:30 and 09:40 run, 09:10 and 09:20 do not.
    tags = sorted(r.header("x-ms-execution-tag") for r in target.requests_to("/All"))
    expected = [T0 + timedelta(minutes=m) for m in (30, 40)]
    assert tags == sorted(tag("All", when) for when in expected)
    ran = [h for h in history(system, url) if h["status"] == "Completed"]
    assert sorted(h["expectedExecutionTime"] for h in ran) == [
        "2026-03-04T09:30:00Z", "2026-03-04T09:40:00Z",
    ]  # fmt: skip
    assert target.requests_to("/Skip") == []
    [postponed] = history(system, skip_url)
    assert postponed["status"] == "Postponed" and "late" not in postponed["message"].split(":")[0]


def test_a_backfill_runs_a_past_range_with_the_original_tags(
    system: System, target: HttpTarget
) -> None:
    url = create(system, "Report", target)
    system.clock.now = T0 + timedelta(hours=2)

    answer = system.client.post(
        url + "/backfill", params=NEW,
        json={"from": "2026-03-04T09:15:00Z", "to": "2026-03-04T09:40:00Z"},
    )  # fmt: skip
    assert answer.status_code == 202, answer.text
    queued = answer.json()["value"]
    times = [T0 + timedelta(minutes=m) for m in (20, 30, 40)]
    assert queued == [
        {"expectedExecutionTime": f"2026-03-04T09:{m}:00Z", "executionTag": tag("Report", when)}
        for m, when in zip((20, 30, 40), times, strict=True)
    ]
    reports = system.execute_visible()
    assert sorted(r.disposition for r in reports) == ["Ran"] * 3
    sent = sorted(r.header("x-ms-execution-tag") for r in target.requests_to("/Report"))
    assert sent == sorted(q["executionTag"] for q in queued)
    entries = history(system, url)
    assert [h["message"].split(" ")[0] for h in entries] == ["[Backfill]"] * 3
    job = system.client.get(url, params=NEW).json()["properties"]
    assert job["state"] == "Enabled" and job["status"]["executionCount"] == 3
