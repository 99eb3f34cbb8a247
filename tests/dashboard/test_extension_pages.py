"""What the dashboard shows of api-version 2026-12-01's extensions, read as text over HTTP:
runs at their jittered start (job page, timeline, editor preview), Skipped and late runs in
history, chart and overview, a paused job's note, the policies in words, the Backfill form
(through the REST route's own function), a collection's signing secret names, and a job's
health with the notifications sent for it."""

from __future__ import annotations

import html
import json
import re
from dataclasses import replace
from datetime import datetime, timedelta

import httpx
import pytest

from scheduler_lib.domain import JobDefinition
from scheduler_lib.store import (
    HistoryEntry,
    NoticeDelivery,
    NoticeRecord,
    add_history,
    get_job,
    mark_overdue,
    open_notice,
    put_job,
)
from tests.api.conftest import EXTENSIONS_VERSION, SUB, api_client, collection_path, job_path
from tests.dashboard.conftest import UI, csrf_token

BASE = f"{UI}/c/{SUB}/rg1/coll"
ACTION = {"type": "Http", "request": {"method": "GET", "uri": "http://127.0.0.1:9/"}}
DAILY_1000 = {
    "startTime": "2026-01-01T00:00:00Z",
    "recurrence": {"frequency": "Day", "schedule": {"hours": [10], "minutes": [0]}},
}
LABEL = re.compile(
    r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC(?: \((\d\d:\d\d(?::\d\d)?) \+(\d+) s jitter\))?"
)


def _text(page: httpx.Response) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.text))


@pytest.fixture
def api(server):
    with api_client(server, version=EXTENSIONS_VERSION) as client:
        assert client.put(collection_path(), json={
            "location": "local", "properties": {"sku": {"name": "P20Premium"}}}
        ).status_code == 201  # fmt: skip
        yield client


def _job(api: httpx.Client, name: str, **properties) -> dict:
    body = {"properties": {"action": ACTION, **properties}}
    response = api.put(job_path(name), json=body)
    assert response.status_code in (200, 201), response.text
    return response.json()


def _next_runs(page: httpx.Response) -> list[str]:
    found = re.search(r'<ol class="next-runs">(.*?)</ol>', page.text, re.S)
    assert found, "no next runs on the page"
    return re.findall(r"<li>(.*?)</li>", found.group(1))


def test_next_runs_show_each_jittered_start_once(signed_in, api) -> None:
    """The first run is what the API's nextExecutionTime says (the offset applied once, not
    twice), every run says its scheduled minute and its offset, and offsets differ."""
    job = _job(api, "spread", maxJitter="PT60S", **DAILY_1000)
    api_next = job["properties"]["status"]["nextExecutionTime"]  # the jittered start
    runs = _next_runs(signed_in.get(BASE + "/jobs/spread"))
    assert len(runs) == 10
    parsed = [LABEL.fullmatch(r) for r in runs]
    assert all(parsed), runs
    first = parsed[0]
    assert first.group(1).replace(" ", "T") + "Z" == api_next
    offsets = set()
    for day, match in enumerate(parsed):
        start = datetime.fromisoformat(match.group(1))
        shift = int(match.group(3) or 0)
        assert start - timedelta(seconds=shift) == datetime(2026, 3, 4 + day, 10, 0), runs
        assert match.group(2) in (None, "10:00") and 0 <= shift < 60
        offsets.add(shift)
    assert len(offsets) > 3  # different occurrences, different offsets
    row = _text(signed_in.get(BASE))
    assert runs[0] in row  # the collection's "Next run" column too


def test_a_job_without_jitter_shows_plain_times(signed_in, api) -> None:
    _job(api, "plain", **DAILY_1000)
    assert _next_runs(signed_in.get(BASE + "/jobs/plain"))[:2] == [
        "2026-03-04 10:00:00 UTC", "2026-03-05 10:00:00 UTC"]  # fmt: skip


def test_timeline_spreads_a_jittered_herd_over_its_minute(signed_in, api) -> None:
    for index in range(100):
        _job(api, f"herd-{index:03d}", maxJitter="PT60S", **DAILY_1000)
    page = signed_in.get(BASE + "/timeline")
    assert "2026-03-04 10:00:00 UTC 100" in _text(page)  # still one minute...
    zoom = re.search(r'<svg class="busiest-minute".*?</svg>', page.text, re.S)
    assert zoom, "no second-by-second view of the busiest minute"
    counts = [int(n) for n in re.findall(r"UTC: (\d+) runs</title>", zoom.group(0))]
    assert sum(counts) == 100 and max(counts) <= 10 and len(counts) >= 40  # ...spread out


def test_editor_preview_shows_jittered_starts_or_the_bound(signed_in, api) -> None:
    job = _job(api, "edited", maxJitter="PT60S", **DAILY_1000)
    edit = signed_in.get(BASE + "/jobs/edited/edit")
    assert f'data-preview="{BASE}/jobs/edited/preview"' in edit.text
    token = csrf_token(edit)
    headers = {"X-CSRF-Token": token}
    form = {"mode": "form", "original": "edited", "method": "GET", "uri": "http://127.0.0.1:9/",
            "startTime": "2026-01-01T00:00:00Z", "frequency": "Day", "interval": "1",
            "hours": "10", "minutes": "0"}  # fmt: skip
    answer = signed_in.post(BASE + "/jobs/edited/preview", data=form, headers=headers).json()
    assert answer["errors"] == []
    assert answer["labels"][0].startswith(
        job["properties"]["status"]["nextExecutionTime"].replace("T", " ").replace("Z", " UTC")
    )
    assert all(LABEL.fullmatch(label) for label in answer["labels"])
    fresh_job = {"properties": {"maxJitter": "PT60S", "action": ACTION, **DAILY_1000}}
    new = {"mode": "json", "json": json.dumps(fresh_job)}
    fresh = signed_in.post(UI + "/preview", data=new, headers=headers).json()
    assert "up to +60 s" in fresh["jitterNote"] and "labels" not in fresh


def _entry(job, clock, minutes_ago: int, status: str, message: str) -> HistoryEntry:
    at = clock.now - timedelta(minutes=minutes_ago)
    number = 0 if message.startswith("[") else 10 - minutes_ago  # a late run's is 0
    return HistoryEntry(job.key, at, at + timedelta(seconds=1), at, "MainAction", status,
                        message, 0, number)  # fmt: skip


def test_history_shows_skipped_with_reason_and_marks_late_runs(
    signed_in, api, store, clock
) -> None:
    _job(api, "busy", concurrencyPolicy="Forbid", recurrence={"frequency": "Minute"})
    job = get_job(store, SUB, "rg1", "coll", "busy")
    reason = ("Skipped the occurrence due at 2026-03-04T08:57:00Z: the previous occurrence was "
              "still running and concurrencyPolicy is Forbid.")  # fmt: skip
    ok = "Http Action - Response from host '127.0.0.1': '200' Response Headers: Body: ok"
    for entry in (
        _entry(job, clock, 4, "Completed", ok),
        _entry(job, clock, 3, "Skipped", reason),
        _entry(job, clock, 2, "Completed", "[CatchUp] " + ok),
        _entry(job, clock, 1, "Completed", "[Backfill] " + ok),
    ):
        add_history(store, entry)
    page = signed_in.get(BASE + "/jobs/busy")
    assert re.search(r"<option[^>]*>Skipped</option>", page.text)
    text = _text(page)
    assert "Skipped " + reason in text
    assert "Completed CatchUp" in text and "Completed Backfill" in text
    assert text.count("x-ms-execution-tag") == 4  # late runs carry their occurrence's tag
    chart = re.search(r'<svg class="chart".*?</svg>', page.text, re.S).group(0)
    assert chart.count('<circle class="lateness') == 3
    assert 'class="not-run skipped"' in chart and "not a failure" in chart
    only = signed_in.get(BASE + "/jobs/busy", params={"status": "Skipped"})
    assert only.text.count('<tr class="entry">') == 1
    spark = re.search(r'<svg class="sparkline"[^>]*aria-label="([^"]*)"', signed_in.get(BASE).text)
    assert spark.group(1) == "0 failed of the last 4, 1 skipped (not failures)"
    overview = _text(signed_in.get(UI + "/"))
    assert "Skipped, last 24 h 1 (not failures)" in overview
    assert "coll / busy" not in overview.split("Needs attention")[1]
    assert "Dispatched, last hour 1 occurrence " in overview  # not the skipped one
    assert "1 occurrences" not in overview  # singular


def test_a_paused_job_shows_its_note_and_why(signed_in, api, store) -> None:
    _job(api, "noted", state="Disabled", pauseNote="Target down until Monday (INC-42)",
         **DAILY_1000)  # fmt: skip
    text = _text(signed_in.get(BASE + "/jobs/noted"))
    assert "Paused. Target down until Monday (INC-42)" in text
    assert "0 consecutive failures now" in text
    _job(api, "tripped", pauseAfterConsecutiveFailures=3, **DAILY_1000)
    record = get_job(store, SUB, "rg1", "coll", "tripped")
    note = "Job disabled: 3 occurrences in a row faulted (the last due at 2026-03-04T08:00:00Z)"
    definition = {**record.definition.document, "pauseNote": note}
    put_job(store, replace(record, state="Disabled", consecutive_failures=3,
                           definition=JobDefinition(definition)))  # fmt: skip
    text = _text(signed_in.get(BASE + "/jobs/tripped"))
    assert "Paused after 3 consecutive failures. " + note in text
    assert "3 consecutive failures now (pauses at 3)" in text


def test_the_schedule_words_name_the_policies(signed_in, api) -> None:
    retry = {"retryType": "Exponential", "retryInterval": "PT20S", "retryCount": 6,
             "maxRetryInterval": "PT10M"}  # fmt: skip
    _job(api, "careful", maxJitter="PT30S", concurrencyPolicy="BufferOne",
         missedRunPolicy="RunAll", catchUpWindow="PT6H",
         action={**ACTION, "retryPolicy": retry, "timeout": "PT2M"}, **DAILY_1000)  # fmt: skip
    text = _text(signed_in.get(BASE + "/jobs/careful"))
    assert "Each attempt is cut off after PT2M in all" in text
    assert "Each run starts up to 30 s after its time (maxJitter" in text
    assert "waits for it (concurrencyPolicy BufferOne)" in text
    assert "the runs missed in the last PT6H run late, at most 50 (missedRunPolicy RunAll)" in text
    assert "retries up to 6 times with exponential backoff from PT20S up to PT10M" in text


def test_backfill_form_queues_the_range_or_names_the_field(signed_in, api) -> None:
    _job(api, "hourly", startTime="2026-03-01T00:00:00Z", recurrence={"frequency": "Hour"})
    page = signed_in.get(BASE + "/jobs/hourly")
    token = csrf_token(page)
    url = BASE + "/jobs/hourly/backfill"
    done = signed_in.post(url, data={"csrf": token, "from": "2026-03-04T05:00:00Z",
                                     "to": "2026-03-04T07:00:00Z"})  # fmt: skip
    assert done.status_code == 200, done.text
    text = _text(done)
    assert "Queued 3 occurrences." in text
    for hour in (5, 6, 7):
        assert f"2026-03-04T0{hour}:00:00Z" in text
    future = signed_in.post(url, data={"csrf": token, "from": "2026-03-04T05:00:00Z",
                                       "to": "2026-03-05T07:00:00Z"})  # fmt: skip
    assert future.status_code == 400
    assert re.search(r'<label class="invalid">To .*?to: must not be in the future', future.text,
                     re.S)  # fmt: skip
    assert 'value="2026-03-05T07:00:00Z"' in future.text  # what was typed stays
    missing = signed_in.post(url, data={"csrf": token, "to": "2026-03-04T07:00:00Z"})
    assert missing.status_code == 400 and "from: is required" in _text(missing)
    forged = signed_in.post(url, data={"from": "2026-03-04T05:00:00Z",
                                       "to": "2026-03-04T07:00:00Z"})  # fmt: skip
    assert forged.status_code == 403


def test_collection_page_lists_signing_secret_names_not_values(signed_in, api) -> None:
    secret = "whsec_" + "c2lnbmluZy1zZWNyZXQtZm9yLXRoZS1kYXNoYm9hcmQ="
    response = api.patch(collection_path(), json={"properties": {"signingSecrets": [
        {"name": "2026-q4", "value": secret}]}})  # fmt: skip
    assert response.status_code == 200, response.text
    created = response.json()["properties"]["signingSecrets"][0]["createdTime"]
    page = signed_in.get(BASE)
    assert "Signing secrets" in page.text and secret.removeprefix("whsec_") not in page.text
    assert f"2026-q4 {created}" in _text(page)


def test_editing_an_exponential_retry_in_the_form_keeps_what_it_does_not_show(
    signed_in, api
) -> None:
    retry = {"retryType": "Exponential", "retryInterval": "PT20S", "retryCount": 6,
             "maxRetryInterval": "PT10M", "retryOn": ["5xx", "transport"]}  # fmt: skip
    _job(api, "backoff", action={**ACTION, "retryPolicy": retry, "timeout": "PT2M"}, **DAILY_1000)
    edit = signed_in.get(BASE + "/jobs/backoff/edit")
    assert re.search(r"<option selected>Exponential</option>", edit.text)
    etag = html.unescape(re.search(r'name="etag" value="([^"]*)"', edit.text).group(1))
    form = {"csrf": csrf_token(edit), "mode": "form", "original": "backoff", "etag": etag,
            "method": "GET", "uri": "http://127.0.0.1:9/changed", "startTime":
            "2026-01-01T00:00:00Z", "frequency": "Day", "interval": "1", "hours": "10",
            "minutes": "0", "retryType": "Exponential", "retryInterval": "PT40S",
            "retryCount": "6"}  # fmt: skip
    saved = signed_in.post(BASE + "/save", data=form)
    assert saved.status_code == 303, saved.text
    stored = api.get(job_path("backoff")).json()["properties"]["action"]
    assert stored["request"]["uri"] == "http://127.0.0.1:9/changed"
    assert stored["retryPolicy"] == {**retry, "retryInterval": "PT40S"}
    assert stored["timeout"] == "PT2M"  # not shown by the form, kept


def test_a_job_page_shows_its_health_and_the_notifications_sent(signed_in, api, store) -> None:
    """Health, the dead-man setting and the notices with their deliveries (never a URL's
    path: a Slack or Teams webhook's path is its key)."""
    _job(api, "watched", alertIfNoSuccessWithin="PT2H", notifications=[
        {"url": "https://hooks.slack.com/services/T0/B0/KEY", "events": ["Missed"],
         "format": "Slack"}], **DAILY_1000)  # fmt: skip
    text = _text(signed_in.get(BASE + "/jobs/watched"))
    assert "Health: Healthy (alert if no success within PT2H)" in text
    assert "Notifications sent None in the last 60 days" in text
    record = get_job(store, SUB, "rg1", "coll", "watched")
    late = datetime(2026, 3, 4, 8, 0, tzinfo=record.created_time.tzinfo)
    put_job(store, replace(record, overdue_since=late))
    delivery = NoticeDelivery.from_json({
        "key": "k",
        "target": "https://hooks.slack.com:443",
        "format": "Slack",
        "status": "Delivered",
        "attempts": 1,
        "statusCode": 200,
        "message": "",
    })  # fmt: skip
    open_notice(
        store,
        NoticeRecord(
            record.key,
            "ntf_x",
            "Missed",
            late,
            "No succeeded execution within 2 hour(s).",
            (delivery,),
        ),
    )
    page = signed_in.get(BASE + "/jobs/watched")
    text = _text(page)
    assert "Health: Overdue since 2026-03-04 08:00:00 UTC (alert if no success within PT2H)" in text
    assert (
        "2026-03-04 08:00:00 Missed No succeeded execution within 2 hour(s). Slack to "
        "https://hooks.slack.com:443: Delivered (1 attempt, 200)"
    ) in text
    assert "KEY" not in page.text.split("Notifications sent")[1].split("</section>")[0]

    # The overview lists the Overdue jobs first (the switch's own list of them).
    mark_overdue(store, record.key, late)
    _job(api, "broken", state="Disabled", **DAILY_1000)
    broken = get_job(store, SUB, "rg1", "coll", "broken")
    put_job(store, replace(broken, state="Faulted"))
    attention = _text(signed_in.get(UI + "/")).split("Needs attention")[1]
    assert attention.index("coll / watched : Overdue") < attention.index("coll / broken : Faulted")


def test_pages_never_show_a_notification_urls_path_and_the_form_keeps_it(
    signed_in, api, store
) -> None:
    """A Slack or Teams webhook's path (or `sig=` query) is its key: the collection page, the
    job page and the editor show the URL masked, and saving the editor's form (which sends
    back what it does not show) keeps the stored URL."""
    slack = "https://hooks.slack.com/services/T0SECRET/B0SECRET/XXXXKEY"
    teams = "https://prod.westeurope.logic.azure.com/workflows/w/invoke?sig=SIGSECRET"
    hooks = [{"url": teams, "events": ["Failed"], "format": "Teams"}]
    patched = api.patch(collection_path(), json={"properties": {"notifications": hooks}})
    assert patched.status_code == 200, patched.text
    _job(api, "hooked", notifications=[{"url": slack, "events": ["Failed"], "format": "Slack"}],
         **DAILY_1000)  # fmt: skip
    job_page = signed_in.get(BASE + "/jobs/hooked")
    assert "https://hooks.slack.com/***" in html.unescape(job_page.text)
    edit = signed_in.get(BASE + "/jobs/hooked/edit")
    for page in (signed_in.get(BASE), job_page, edit):
        assert page.status_code == 200
        assert "SECRET" not in page.text and "XXXXKEY" not in page.text
    etag = html.unescape(re.search(r'name="etag" value="([^"]*)"', edit.text).group(1))
    form = {"csrf": csrf_token(edit), "mode": "form", "original": "hooked", "etag": etag,
            "method": "GET", "uri": "http://127.0.0.1:9/changed", "startTime":
            "2026-01-01T00:00:00Z", "frequency": "Day", "interval": "1", "hours": "10",
            "minutes": "0", "retryType": "None"}  # fmt: skip
    saved = signed_in.post(BASE + "/save", data=form)
    assert saved.status_code == 303, saved.text
    record = get_job(store, SUB, "rg1", "coll", "hooked")
    assert record.definition.document["action"]["request"]["uri"] == "http://127.0.0.1:9/changed"
    assert [n["url"] for n in record.definition.document["notifications"]] == [slack]
