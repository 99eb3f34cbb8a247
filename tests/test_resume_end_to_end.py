"""A job collection disabled for a while, then enabled again, end to end: jobs created
through the real API (2026-12-01), the real dispatcher tick and executor, Azurite and a real
local HTTP target, one hand-moved clock. The occurrences missed while it was disabled never
run in a burst: each job's missedRunPolicy decides, as after downtime (Skip: none,
RunLatest: the latest once, RunAll: those inside catchUpWindow), and the schedule goes on at
the next occurrence after the resume. Before this, none ran whatever the policy."""

from __future__ import annotations

from datetime import timedelta

from tests import test_end_to_end as e2e
from tests.support.http_target import HttpTarget
from tests.test_end_to_end import COLLECTION, T0, System
from tests.test_missed_end_to_end import NEW, create, history, tag

system, target = e2e.system, e2e.target


def set_collection(running: System, state: str) -> None:
    response = running.client.patch(COLLECTION, json={"properties": {"state": state}})
    assert response.status_code == 200, response.text


def test_a_resumed_collection_runs_only_what_each_policy_asks(
    system: System, target: HttpTarget
) -> None:
    skip = create(system, "Skip", target)
    latest = create(system, "Latest", target, missedRunPolicy="RunLatest")
    every = create(system, "All", target, missedRunPolicy="RunAll", catchUpWindow="PT25M")
    system.clock.now = T0 + timedelta(minutes=5)
    assert system.tick_and_execute() == []
    set_collection(system, "Disabled")
    system.clock.now = T0 + timedelta(minutes=47)  # 09:10 ... 09:40 fall while disabled
    assert system.tick_and_execute() == []

    set_collection(system, "Enabled")
    reports = system.execute_visible()
    assert sorted(r.disposition for r in reports) == ["Ran"] * 3  # 1 + 2, not 4 + 4 + 4
    assert target.requests_to("/Skip") == [] and history(system, skip) == []
    [late] = target.requests_to("/Latest")
    assert late.header("x-ms-execution-tag") == tag("Latest", T0 + timedelta(minutes=40))
    # The window reaches back to 09:22: 09:30 and 09:40 run late, 09:10 and 09:20 do not.
    tags = sorted(r.header("x-ms-execution-tag") for r in target.requests_to("/All"))
    assert tags == sorted(tag("All", T0 + timedelta(minutes=m)) for m in (30, 40))
    entries = history(system, every) + history(system, latest)
    assert {h["message"].split(" ")[0] for h in entries} == {"[CatchUp]"}
    for url in (skip, latest, every):
        job = system.client.get(url, params=NEW).json()["properties"]
        assert job["status"]["nextExecutionTime"] == "2026-03-04T09:50:00Z"

    system.clock.now = T0 + timedelta(minutes=50)  # on schedule again, once each
    assert sorted(r.disposition for r in system.tick_and_execute()) == ["Ran"] * 3
    assert len(target.requests_to("/Skip")) == 1
