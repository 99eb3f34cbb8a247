"""The overview's outcomes per hour and start lateness (p50, p99) over 24 hours and 7 days,
read from history entries written at known times; the jobs in trouble it lists (dead-man
Overdue, paused by pauseAfterConsecutiveFailures, in a failing streak); and a job page's
dead-man window, its own or its collection's default. Real Azurite, the dashboard over
HTTP with the test's clock."""

from __future__ import annotations

import html
import re
from dataclasses import replace
from datetime import timedelta

import httpx
import pytest

from scheduler_lib.store import HistoryEntry, add_history, get_job, mark_overdue, put_job
from tests.api.conftest import EXTENSIONS_VERSION, SUB, api_client, collection_path, job_path
from tests.dashboard.conftest import UI

BASE = f"{UI}/c/{SUB}/rg1"
ACTION = {"type": "Http", "request": {"method": "GET", "uri": "http://127.0.0.1:9/"}}
DAILY = {
    "startTime": "2026-01-01T00:00:00Z",
    "recurrence": {"frequency": "Day", "schedule": {"hours": [10], "minutes": [0]}},
}


def _text(page: httpx.Response) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page.text)))


@pytest.fixture
def api(server):
    with api_client(server, version=EXTENSIONS_VERSION) as client:
        body = {"location": "local", "properties": {"sku": {"name": "P20Premium"}}}
        assert client.put(collection_path(), json=body).status_code == 201
        yield client


def _job(api: httpx.Client, name: str, collection: str = "coll", **properties) -> None:
    body = {"properties": {"action": ACTION, **DAILY, **properties}}
    response = api.put(job_path(name, collection), json=body)
    assert response.status_code in (200, 201), response.text


def _window(page: httpx.Response, span: str) -> str:
    found = re.search(
        rf'<div class="card activity" data-span="{span}">(.*?)</div>', page.text, re.S
    )
    assert found, f"no {span} window on the overview"
    return found.group(1)


def test_overview_shows_outcomes_per_hour_and_lateness_percentiles(
    signed_in, api, store, clock
) -> None:
    _job(api, "steady")
    key = get_job(store, SUB, "rg1", "coll", "steady").key
    now = clock.now  # 2026-03-04 09:00 UTC

    def entry(start, late: float, status="Completed", retry=0, number=1) -> HistoryEntry:
        expected = start - timedelta(seconds=late)
        return HistoryEntry(key, start, start + timedelta(seconds=1), expected, "MainAction",
                            status, "m", retry, number)  # fmt: skip

    two_hours_ago = now - timedelta(hours=2)  # 07:00
    entries = [  # first attempts 07:01..07:20, late 1..20 s; the last failed
        entry(
            two_hours_ago + timedelta(minutes=i), i, "Failed" if i == 20 else "Completed", number=i
        )
        for i in range(1, 21)
    ]
    entries += [
        entry(two_hours_ago + timedelta(minutes=40), 3600, retry=1, number=20),  # a retry
        entry(now - timedelta(hours=4), 1000, number=0),  # a manual run (05:00)
        entry(now - timedelta(hours=5, minutes=50), 0, "Skipped", number=30),  # 03:10
    ]
    three_days_ago = now - timedelta(days=3)
    entries += [entry(three_days_ago + timedelta(minutes=i), 100, number=40 + i) for i in range(5)]
    entries.append(entry(now - timedelta(days=8), 5000, number=2))  # outside both windows
    for e in entries:
        add_history(store, e)

    page = signed_in.get(UI + "/")
    day = _window(page, "24h")
    day_text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", day))
    # Nearest-rank over the 20 first attempts (1..20 s): p50 the 10th, p99 the 20th.
    assert "Lateness p50 10.00 s, p99 20.00 s over 20 occurrences." in day_text
    assert "Completed 21, Failed 1, Postponed 0, Skipped 1, Other 0." in day_text
    hours = re.findall(r'<g class="hour"><title>([^<]*)</title>', day)
    assert hours == [
        "2026-03-04 03:00 UTC: 1 Skipped",
        "2026-03-04 05:00 UTC: 1 Completed",  # a manual run: no lateness
        "2026-03-04 07:00 UTC: 20 Completed, 1 Failed; lateness p50 10.00s, p99 20.00s",
    ]
    week = _window(page, "7d")
    week_text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", week))
    # 25 first attempts: 1..20 s and five of 100 s: p50 the 13th (13 s), p99 the 25th.
    assert "Lateness p50 13.00 s, p99 100.00 s over 25 occurrences." in week_text
    assert "Completed 26, Failed 1, Postponed 0, Skipped 1, Other 0." in week_text
    week_hours = re.findall(r'<g class="hour"><title>([^<]*)</title>', week)
    assert week_hours[0] == "2026-03-01 09:00 UTC: 5 Completed; lateness p50 100.00s, p99 100.00s"
    assert len(week_hours) == 4 and week_hours[1:] == hours
    assert week.count('<rect class="completed"') == 3  # one bar segment per hour with any


def test_overview_lists_jobs_in_trouble_overdue_first(signed_in, api, store, clock) -> None:
    _job(api, "watched", alertIfNoSuccessWithin="PT2H")
    _job(api, "streaky")
    _job(api, "tripped", pauseAfterConsecutiveFailures=3)
    _job(api, "resting", state="Disabled")  # disabled by hand: not in trouble
    watched = get_job(store, SUB, "rg1", "coll", "watched")
    late = clock.now - timedelta(hours=1)
    put_job(store, replace(watched, overdue_since=late))
    mark_overdue(store, watched.key, late)
    streaky = get_job(store, SUB, "rg1", "coll", "streaky")
    put_job(store, replace(streaky, consecutive_failures=2))
    tripped = get_job(store, SUB, "rg1", "coll", "tripped")
    put_job(store, replace(tripped, state="Disabled", consecutive_failures=3))

    attention = _text(signed_in.get(UI + "/")).split("Needs attention")[1]
    attention = attention.split("Outcomes and lateness")[0]
    assert "coll / watched : Overdue" in attention
    assert "coll / tripped : paused after 3 consecutive failures" in attention
    assert "coll / streaky : failing streak: 2 consecutive failures" in attention
    assert attention.index("coll / watched") < attention.index("coll / tripped")
    assert "resting" not in attention


def test_a_job_page_shows_its_dead_man_window_own_or_the_collections(signed_in, api) -> None:
    _job(api, "own", alertIfNoSuccessWithin="PT2H")
    _job(api, "unwatched")
    body = {"location": "local", "properties": {"alertIfNoSuccessWithin": "PT6H"}}
    assert api.put(collection_path("guarded"), json=body).status_code == 201
    _job(api, "inherits", collection="guarded")
    _job(api, "overrides", collection="guarded", alertIfNoSuccessWithin="PT30M")

    own = _text(signed_in.get(BASE + "/coll/jobs/own"))
    assert (
        "Dead-man switch: alert if no success within PT2H (its own alertIfNoSuccessWithin)" in own
    )
    inherits = _text(signed_in.get(BASE + "/guarded/jobs/inherits"))
    assert "Health: Healthy (alert if no success within PT6H)." in inherits
    assert "Dead-man switch: alert if no success within PT6H (the collection's default)" in inherits
    overrides = _text(signed_in.get(BASE + "/guarded/jobs/overrides"))
    assert "within PT30M (its own alertIfNoSuccessWithin)" in overrides
    unwatched = _text(signed_in.get(BASE + "/coll/jobs/unwatched"))
    assert "Health: Healthy" in unwatched and "(alert if no success" not in unwatched
    assert "Dead-man switch: none" in unwatched
