"""What the dashboard's pages show, read as text: collections, jobs with their schedule in
plain words and paging, one job's definition (secrets redacted), next runs, history and
chart, the timeline's herd; every page escaped and under the strict CSP."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import timedelta
from itertools import pairwise
from xml.etree import ElementTree

import httpx
import pytest

from scheduler_lib.dashboard.web import CSP
from scheduler_lib.domain import JobRecord
from scheduler_lib.store import HistoryEntry, add_history, get_job, put_job
from tests.api.conftest import EXTENSIONS_VERSION, SUB, api_client, collection_path, job_path
from tests.dashboard.conftest import UI, csrf_token

BASE = f"{UI}/c/{SUB}/rg1/coll"
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]


def _text(page: httpx.Response) -> str:
    """What a person reads: the page without its tags."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.text))


@pytest.fixture
def api(server):
    with api_client(server) as client:
        assert client.put(collection_path(), json={
            "location": "local", "properties": {"sku": {"name": "P20Premium"}}}
        ).status_code == 201  # fmt: skip
        yield client


def _job(api: httpx.Client, name: str, **properties) -> dict:
    action = properties.pop(
        "action", {"type": "Http", "request": {"method": "GET", "uri": "http://127.0.0.1:9/"}}
    )
    response = api.put(job_path(name), json={"properties": {"action": action, **properties}})
    assert response.status_code in (200, 201), response.text
    return response.json()


WEEKDAY_0900 = {
    "startTime": "2026-01-01T00:00:00",
    "recurrence": {"frequency": "Week", "schedule": {"weekDays": WEEKDAYS, "hours": [9],
                   "minutes": [0]}, "timeZone": "W. Europe Standard Time"},
}  # fmt: skip


def test_overview_lists_collections_with_sku_and_quota_use(signed_in, api) -> None:
    _job(api, "one", **WEEKDAY_0900)
    text = _text(signed_in.get(UI + "/"))
    assert "coll" in text and "P20Premium" in text and "1 of 1000" in text
    assert "Last tick never" in text


def test_collection_page_says_each_schedule_in_plain_words(signed_in, api) -> None:
    _job(api, "report", **WEEKDAY_0900)
    _job(api, "ping", recurrence={"frequency": "Minute", "interval": 5, "count": 10})
    text = _text(signed_in.get(BASE))
    assert "every weekday at 09:00 Europe/Berlin" in text
    assert "every 5 minutes UTC (10 times)" in text
    assert "2026-03-05 08:00:00 UTC" in text  # next run: Thursday 09:00 in Berlin


def test_collection_page_filters_by_state_searches_and_pages_past_100(signed_in, api) -> None:
    for index in range(105):
        _job(api, f"job-{index:03d}", state="Disabled" if index % 50 == 0 else "Enabled",
             **WEEKDAY_0900)  # fmt: skip
    first = signed_in.get(BASE)
    assert len(re.findall(r'/jobs/job-\d+">', first.text)) == 100
    link = re.search(r'rel="next" href="([^"]+)"', first.text)
    assert link
    second = signed_in.get(link.group(1).replace("&amp;", "&"))
    assert len(re.findall(r'/jobs/job-\d+">', second.text)) == 5 and "job-104" in second.text
    disabled = _text(signed_in.get(BASE, params={"state": "Disabled"}))
    assert "job-000" in disabled and "job-050" in disabled and "job-001" not in disabled
    found = _text(signed_in.get(BASE, params={"q": "JOB-10"}))
    assert "job-100" in found and "job-104" in found and "job-099" not in found


def test_job_page_shows_definition_without_secrets_and_next_runs(signed_in, api) -> None:
    action = {
        "type": "Http",
        "request": {
            "method": "POST",
            "uri": "https://127.0.0.1:9/hook",
            "body": "{}",
            "authentication": {"type": "Basic", "username": "u", "password": "s3cret-pw"},
        },
    }
    _job(api, "report", action=action, **WEEKDAY_0900)
    page = signed_in.get(BASE + "/jobs/report")
    assert page.status_code == 200 and "s3cret-pw" not in page.text
    text = _text(page)
    assert "every weekday at 09:00 Europe/Berlin" in text
    runs = re.findall(r"<li>(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC)</li>", page.text)
    assert runs[:3] == ["2026-03-05 08:00:00 UTC", "2026-03-06 08:00:00 UTC",
                        "2026-03-09 08:00:00 UTC"] and len(runs) == 10  # fmt: skip
    edit = signed_in.get(BASE + "/jobs/report/edit")
    assert edit.status_code == 200 and "s3cret-pw" not in edit.text


def _history(store, job: JobRecord, clock, statuses: list[str]) -> None:
    for index, status in enumerate(statuses):
        expected = clock.now - timedelta(minutes=len(statuses) - index)
        code = 500 if status == "Failed" else 200
        message = (
            f"Http Action - Response from host '127.0.0.1': '{code}' "
            f"Response Headers: X: <b>y</b> Body: attempt {index}"
        )
        add_history(store, HistoryEntry(
            job.key, expected + timedelta(seconds=index), expected + timedelta(seconds=2 * index),
            expected, "MainAction", status, message, 0, index + 1))  # fmt: skip


def test_job_page_history_rows_details_filter_and_chart(signed_in, api, store, clock) -> None:
    _job(api, "ping", recurrence={"frequency": "Minute", "interval": 1})
    record = get_job(store, SUB, "rg1", "coll", "ping")
    _history(store, record, clock, ["Completed", "Failed", "Completed", "Postponed"])
    page = signed_in.get(BASE + "/jobs/ping")
    assert page.text.count('<tr class="entry">') == 4
    assert "&lt;b&gt;y&lt;/b&gt;" in page.text and "<b>y</b>" not in page.text
    assert "x-ms-execution-tag" in page.text and "x-ms-scheduler-jobid" in page.text
    assert "2.00 s" in page.text  # the third entry's lateness
    chart = re.search(r'<svg class="chart".*?</svg>', page.text, re.S)
    assert chart and chart.group(0).count('<circle class="lateness') == 3  # not Postponed
    assert 'class="lateness failed"' in chart.group(0)
    failed = signed_in.get(BASE + "/jobs/ping", params={"status": "Failed"})
    assert failed.text.count('<tr class="entry">') == 1 and "500" in _text(failed)
    recent = _text(signed_in.get(BASE))
    assert "Postponed" in recent  # last outcome on the collection page
    overview = _text(signed_in.get(UI + "/"))
    attention = overview.split("Needs attention")[1]
    assert "coll / ping" in attention
    assert "failed in the last 24 h" in attention and "postponed/missed" in attention
    assert "Failures, last 24 h 1" in overview
    assert "Dispatched, last hour 3 occurrences" in overview  # not the Postponed one


def _chart(client: httpx.Client, job: str) -> ElementTree.Element:
    """The job page's lateness/duration chart, as elements."""
    found = re.search(r'<svg class="chart".*?</svg>', client.get(f"{BASE}/jobs/{job}").text, re.S)
    assert found, "the job page has no chart"
    return ElementTree.fromstring(found.group(0))


def _extent(shape: ElementTree.Element) -> float:
    """How far a chart shape reaches on screen (0: drawn, yet nothing to see)."""
    if shape.tag.endswith("polyline"):
        points = [tuple(map(float, p.split(","))) for p in shape.get("points", "").split()]
        return sum(abs(a[0] - b[0]) + abs(a[1] - b[1]) for a, b in pairwise(points))
    if shape.tag.endswith("line"):
        return abs(float(shape.get("x2", 0)) - float(shape.get("x1", 0))) + abs(
            float(shape.get("y2", 0)) - float(shape.get("y1", 0)))  # fmt: skip
    return float(shape.get("r", 0)) or float(shape.get("width", 0)) * float(shape.get("height", 0))


def test_the_chart_of_a_job_with_one_run_shows_its_duration(signed_in, api, store, clock) -> None:
    _job(api, "once", recurrence={"frequency": "Minute", "interval": 1})
    _history(store, get_job(store, SUB, "rg1", "coll", "once"), clock, ["Completed"])
    chart = _chart(signed_in, "once")
    legend = set(chart.iterfind(".//{*}g[@class='legend']//*"))
    marks = [e for e in chart.iter() if e not in legend and "duration" in e.get("class", "")]
    assert marks and max(_extent(mark) for mark in marks) > 0  # not a line through one point
    assert all(_extent(dot) > 0 for dot in chart.iterfind(".//{*}circle"))
    ticks = [t.text for t in chart.iterfind(".//{*}text[@class='tick']")]
    assert len(ticks) == len(set(ticks)), ticks  # its one time is said once


def test_the_charts_time_axis_tells_runs_within_one_minute_apart(signed_in, api, store, clock):
    _job(api, "twice", recurrence={"frequency": "Minute", "interval": 1})
    record = get_job(store, SUB, "rg1", "coll", "twice")
    at = clock.now.replace(second=0, microsecond=0) - timedelta(minutes=1)
    for index, seconds in enumerate((0, 40)):  # a scheduled run and a "Run now"
        due = at + timedelta(seconds=seconds)
        add_history(store, HistoryEntry(record.key, due, due + timedelta(seconds=1), due,
                                        "MainAction", "Completed", "ok", 0, index + 1))  # fmt: skip
    ticks = [t.text or "" for t in _chart(signed_in, "twice").iter()
             if t.get("class") == "tick" and ":" in (t.text or "")]  # fmt: skip
    assert len(ticks) == 2 and ticks[0] != ticks[1], ticks


def test_a_job_whose_last_run_is_done_says_why_it_has_no_next_run(signed_in, api, store, clock):
    """A count-1 job whose run failed and is retrying: Enabled, nothing left to schedule. It
    said "None: the job is Enabled." (no reason at all) and "1 executions, 1 failures"."""
    _job(api, "last", recurrence={"frequency": "Minute", "count": 1})
    record = get_job(store, SUB, "rg1", "coll", "last")
    ran = replace(record, next_execution_time=None, execution_count=1, failure_count=1)
    put_job(store, ran, etag=record.etag)
    _history(store, record, clock, ["Failed"])
    text = _text(signed_in.get(BASE + "/jobs/last"))
    assert "Runs every minute UTC (once)." in text
    assert "None: its schedule has no later occurrence" in text
    assert "the job is Enabled" not in text
    assert "1 execution, 1 failure, 0 faulted" in text


def test_the_timeline_counts_one_job_in_the_singular(signed_in, api) -> None:
    _job(api, "daily", **WEEKDAY_0900)
    text = _text(signed_in.get(BASE + "/timeline"))
    assert "of 1 enabled job," in text, text


def test_overview_tells_a_job_failing_now_from_one_that_recovered(signed_in, api, store, clock):
    for name, statuses in (
        ("recovered", ["Failed", "Completed"]),
        ("broken", ["Completed", "Failed"]),
    ):
        _job(api, name, recurrence={"frequency": "Minute", "interval": 1})
        _history(store, get_job(store, SUB, "rg1", "coll", name), clock, statuses)
    attention = _text(signed_in.get(UI + "/")).split("Needs attention")[1]
    assert "coll / broken : failing now (its last run failed)" in attention
    assert "coll / recovered : failed in the last 24 h" in attention
    assert "Failures, last 24 h 2" in _text(signed_in.get(UI + "/"))


def test_timeline_shows_a_herd_of_100_jobs_at_one_minute(signed_in, api) -> None:
    for index in range(100):
        _job(api, f"herd-{index:03d}", **WEEKDAY_0900)
    _job(
        api,
        "loner",
        startTime="2026-01-01T00:00:00",
        recurrence={"frequency": "Day", "schedule": {"hours": [13], "minutes": [30]}},
    )
    page = signed_in.get(BASE + "/timeline")
    text = _text(page)
    assert "101 runs of 101 enabled jobs" in text
    assert "2026-03-05 08:00:00 UTC 100" in text  # the busiest minute, first in the list
    assert "busiest minute: 100 runs" in page.text
    assert page.text.count('class="bar peak"') == 1
    week = _text(signed_in.get(BASE + "/timeline", params={"span": "7d"}))
    assert "per hour" in week and "507 runs" in week  # 5 weekdays x 100 + 7 x 1


def test_a_hostile_name_and_values_are_shown_escaped(signed_in, api) -> None:
    hostile = "<script>alert(1)</script>"
    _job(api, "quiet", action={"type": "Http", "request": {
        "method": "POST", "uri": "http://127.0.0.1:9/", "body": hostile,
        "headers": {"X-Note": hostile}}})  # fmt: skip
    assert hostile not in signed_in.get(BASE + "/jobs/quiet").text
    token = csrf_token(signed_in.get(BASE + "/new"))
    page = signed_in.post(BASE + "/save", data={"csrf": token, "mode": "form", "name": hostile,
                                                "uri": "http://127.0.0.1:9/"})  # fmt: skip
    assert page.status_code == 400
    assert hostile not in page.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    assert "jobName" in page.text


def test_a_link_cannot_make_a_page_say_something(signed_in) -> None:
    page = signed_in.get(UI + "/", params={"notice": "Your key expired: paste it at evil.test"})
    assert "evil.test" not in page.text


def test_every_page_sends_the_strict_csp(signed_in, api, server) -> None:
    _job(api, "one", **WEEKDAY_0900)
    paths = [
        "/",
        "/signin",
        BASE.removeprefix(UI),
        BASE.removeprefix(UI) + "/timeline",
        BASE.removeprefix(UI) + "/new",
        BASE.removeprefix(UI) + "/jobs/one",
        BASE.removeprefix(UI) + "/jobs/one/edit",
        BASE.removeprefix(UI) + "/jobs/nope",
    ]
    for path in paths:
        response = signed_in.get(UI + path)
        assert response.headers["content-security-policy"] == CSP, path
        assert "<script>" not in response.text and " on" + "click=" not in response.text
    assert signed_in.get(BASE + "/jobs/nope").status_code == 404
    assert httpx.get(server.base_url + UI + "/signin").headers["content-security-policy"] == CSP


def test_no_page_shows_a_collections_signing_secret(signed_in, api, server) -> None:
    """A collection's signing secrets (api-version 2026-12-01) are write-only: no page of
    the dashboard, which reads the collection at that version, shows their value."""
    secret = "whsec_" + "c2lnbmluZy1zZWNyZXQtZm9yLXRoZS1kYXNoYm9hcmQ="
    with api_client(server, version=EXTENSIONS_VERSION) as api_ext:
        response = api_ext.patch(
            collection_path(),
            json={"properties": {"signingSecrets": [{"name": "primary", "value": secret}]}},
        )
        assert response.status_code == 200, response.text
    _job(api, "signed", **WEEKDAY_0900)
    coll = BASE.removeprefix(UI)
    for path in ("/", coll, coll + "/timeline", coll + "/jobs/signed", coll + "/jobs/signed/edit"):
        page = signed_in.get(UI + path)
        assert page.status_code == 200, path
        assert secret not in page.text and secret.removeprefix("whsec_") not in page.text, path
    disabled = signed_in.post(BASE + "/disable", data={"csrf": csrf_token(signed_in.get(UI + "/"))})
    assert disabled.status_code == 303, disabled.text
    with api_client(server, version=EXTENSIONS_VERSION) as api_ext:
        kept = api_ext.get(collection_path()).json()["properties"]["signingSecrets"]
    assert [s["name"] for s in kept] == ["primary"]  # disabling in the dashboard keeps them
