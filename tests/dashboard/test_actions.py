"""The dashboard's buttons and editors, over HTTP as a browser posts them: each ends in the
REST API's own service, so what they store is what the API reads back, and their errors are
the API's errors, shown next to the field they name."""

from __future__ import annotations

import html
import json
import re

import pytest

from scheduler_lib.store import get_job
from tests.api.conftest import EXTENSIONS_VERSION, SUB, api_client, job_path
from tests.dashboard.conftest import UI, csrf_token

BASE = f"{UI}/c/{SUB}/rg1/coll"


@pytest.fixture
def token(signed_in) -> str:
    token = csrf_token(signed_in.get(UI + "/"))
    created = signed_in.post(
        UI + "/collections",
        data={
            "csrf": token,
            "subscription": SUB,
            "group": "rg1",
            "name": "coll",
            "sku": "Standard",
        },
    )
    assert created.status_code == 303 and created.headers["location"].startswith(BASE)
    return token


@pytest.fixture
def api(server):
    with api_client(server) as client:
        yield client


def _form(token: str, **fields: str) -> dict[str, str]:
    return {"csrf": token, "mode": "form", "method": "GET", "uri": "http://127.0.0.1:9/",
            "state": "Enabled", **fields}  # fmt: skip


def test_a_job_created_with_the_form_is_what_the_api_reads(signed_in, token, api) -> None:
    saved = signed_in.post(
        BASE + "/save",
        data=_form(
            token,
            name="report",
            frequency="Week",
            weekDays="Monday, Friday",
            hours="9",
            minutes="0",
            timeZone="Europe/Berlin",
            startTime="2026-01-01T00:00:00",
            retryType="Fixed",
            retryInterval="PT1M",
            retryCount="3",
            headers="X-Team: ops",
        ),
    )
    assert saved.status_code == 303 and saved.headers["location"].startswith(BASE + "/jobs/report")
    properties = api.get(job_path("report")).json()["properties"]  # 2016-03-01's spelling
    assert properties["recurrence"]["schedule"] == {
        "weekDays": ["monday", "friday"],
        "hours": [9],
        "minutes": [0],
    }
    assert properties["action"]["retryPolicy"] == {
        "retryType": "fixed",
        "retryInterval": "PT1M",
        "retryCount": 3,
    }
    assert properties["action"]["request"]["headers"] == {"X-Team": "ops"}
    assert properties["status"]["nextExecutionTime"] == "2026-03-06T08:00:00Z"


def test_form_errors_are_shown_next_to_their_field(signed_in, token, api) -> None:
    page = signed_in.post(BASE + "/save", data=_form(token, name="bad", frequency="Hour",
                                                     interval="0"))  # fmt: skip
    assert page.status_code == 400
    assert "properties.recurrence.interval" in page.text
    field = re.search(r'<label class="invalid">Every \(interval\).*?</label>', page.text, re.S)
    assert field and "field-error" in field.group(0)
    assert 'value="0"' in field.group(0)  # what the user typed is kept
    assert api.get(job_path("bad")).status_code == 404


def test_the_json_editor_saves_any_action_and_reports_bad_json(signed_in, token, api) -> None:
    bad = signed_in.post(BASE + "/save", data={"csrf": token, "mode": "json", "name": "q",
                                               "json": '{"properties": '})  # fmt: skip
    assert bad.status_code == 400 and "is not valid JSON" in bad.text
    assert "{&#34;properties&#34;: " in bad.text  # the text is kept for fixing
    body = {"properties": {"action": {"type": "StorageQueue", "queueMessage": {
        "storageAccount": "devstoreaccount1", "queueName": "out", "message": "hi",
        "sasToken": "sv=2020&sig=abc"}}}}  # fmt: skip
    saved = signed_in.post(BASE + "/save", data={"csrf": token, "mode": "json", "name": "q",
                                                 "json": json.dumps(body)})  # fmt: skip
    assert saved.status_code == 303, saved.text
    assert api.get(job_path("q")).json()["properties"]["action"]["type"] == "StorageQueue"
    edit = signed_in.get(BASE + "/jobs/q/edit")
    assert "sig=abc" not in edit.text  # the JSON editor starts from the redacted job


def test_editing_with_the_form_keeps_the_stored_secret(signed_in, token, api, store) -> None:
    body = {
        "properties": {
            "action": {
                "type": "Http",
                "request": {
                    "method": "GET",
                    "uri": "http://127.0.0.1:9/a",
                    "authentication": {"type": "Basic", "username": "u", "password": "pw-1"},
                },
            }
        }
    }
    assert api.put(job_path("auth"), json=body).status_code == 201
    edit = signed_in.get(BASE + "/jobs/auth/edit")
    etag = html.unescape(re.search(r'name="etag" value="([^"]+)"', edit.text).group(1))
    saved = signed_in.post(
        BASE + "/save",
        data=_form(token, original="auth", etag=etag, uri="http://127.0.0.1:9/b", frequency="Hour"),
    )
    assert saved.status_code == 303, saved.text
    stored = get_job(store, SUB, "rg1", "coll", "auth").definition.document
    assert stored["action"]["request"]["authentication"]["password"] == "pw-1"
    assert stored["action"]["request"]["uri"] == "http://127.0.0.1:9/b"
    stale = signed_in.post(
        BASE + "/save", data=_form(token, original="auth", etag=etag, uri="http://127.0.0.1:9/c")
    )
    assert stale.status_code == 412  # someone (this test) changed it since the form was read
    assert "has changed" in stale.text and 'value="http://127.0.0.1:9/c"' in stale.text


def test_editing_keeps_the_jobs_extensions(signed_in, token, server, store) -> None:
    """The dashboard is the scheduler's own client, at the newest api-version: saving a
    job that uses extensions (with the form or the JSON editor) keeps them, where a
    2016-03-01 PUT would drop them."""
    body = {
        "properties": {
            "action": {"type": "Http", "request": {"method": "GET", "uri": "http://127.0.0.1:9/a"}},
            "recurrence": {"frequency": "Hour", "interval": 1},
            "maxJitter": "PT30S",
            "pauseNote": "kept by the dashboard",
        }
    }
    with api_client(server, version=EXTENSIONS_VERSION) as api_ext:
        assert api_ext.put(job_path("ext"), json=body).status_code == 201
    edit = signed_in.get(BASE + "/jobs/ext/edit")
    assert "PT30S" in edit.text  # the JSON editor shows the extension
    etag = html.unescape(re.search(r'name="etag" value="([^"]+)"', edit.text).group(1))
    saved = signed_in.post(
        BASE + "/save",
        data=_form(token, original="ext", etag=etag, uri="http://127.0.0.1:9/b", frequency="Hour"),
    )
    assert saved.status_code == 303, saved.text
    stored = get_job(store, SUB, "rg1", "coll", "ext").definition.document
    assert stored["action"]["request"]["uri"] == "http://127.0.0.1:9/b"
    assert stored["maxJitter"] == "PT30S" and stored["pauseNote"] == "kept by the dashboard"


def test_disable_enable_run_now_and_delete(signed_in, token, api, queue) -> None:
    saved = signed_in.post(
        BASE + "/save",
        data=_form(token, name="j", frequency="Day", startTime="2026-01-01T10:00:00"),
    )
    assert saved.status_code == 303
    here = BASE + "/jobs/j"
    disabled = signed_in.post(here + "/disable", data={"csrf": token})
    assert disabled.status_code == 303
    assert "Job j is Disabled." in signed_in.get(disabled.headers["location"]).text
    assert "Job j is Disabled." not in signed_in.get(here).text  # said once
    assert api.get(job_path("j")).json()["properties"]["state"] == "disabled"
    assert signed_in.post(here + "/enable", data={"csrf": token}).status_code == 303
    assert api.get(job_path("j")).json()["properties"]["state"] == "enabled"
    assert signed_in.post(here + "/run", data={"csrf": token}).status_code == 303
    messages = queue.receive(max_messages=10, visibility_timeout=1)
    assert [json.loads(m.body).get("manual") for m in messages] == [True]
    refused = signed_in.post(here + "/delete", data={"csrf": token, "confirm": "other"})
    assert refused.status_code == 400 and api.get(job_path("j")).status_code == 200
    deleted = signed_in.post(here + "/delete", data={"csrf": token, "confirm": "j"})
    assert deleted.status_code == 303 and api.get(job_path("j")).status_code == 404


def test_collection_disable_and_enable(signed_in, token, api) -> None:
    assert signed_in.post(BASE + "/disable", data={"csrf": token}).status_code == 303
    assert "Disabled" in signed_in.get(BASE).text
    state = api.get(f"/subscriptions/{SUB}/resourceGroups/rg1/providers/Microsoft.Scheduler"
                    "/jobCollections/coll").json()["properties"]["state"]  # fmt: skip
    assert state == "Disabled"
    assert signed_in.post(BASE + "/enable", data={"csrf": token}).status_code == 303


def test_the_live_preview_answers_for_form_and_json(signed_in, token) -> None:
    headers = {"X-CSRF-Token": token}
    form = _form(token, frequency="Week", weekDays="Monday", hours="9", minutes="0",
                 startTime="2026-01-01T00:00:00", timeZone="Europe/Berlin")  # fmt: skip
    answer = signed_in.post(UI + "/preview", data=form, headers=headers).json()
    assert answer["executions"][:2] == ["2026-03-09T08:00:00Z", "2026-03-16T08:00:00Z"]
    assert answer["words"] == "every Monday at 09:00 Europe/Berlin"
    wrong = signed_in.post(UI + "/preview", data=_form(token, frequency="Hour", interval="-1"),
                           headers=headers).json()  # fmt: skip
    assert wrong["executions"] == [] and wrong["errors"][0]["target"].endswith("interval")
    text = json.dumps({"properties": {"recurrence": {"frequency": "Minute", "count": 2},
                                      "action": {"type": "Http"}}})  # fmt: skip
    answer = signed_in.post(UI + "/preview", data={"mode": "json", "json": text},
                            headers=headers).json()  # fmt: skip
    assert len(answer["executions"]) == 2 and answer["endReason"]


def _alerts(page) -> list[str]:
    """The lines of the page's error box, as a person reads them."""
    box = re.search(r'<div class="error" role="alert" id="errors">(.*?)</div>', page.text, re.S)
    assert box, "the page shows no errors"
    return [html.unescape(re.sub(r"<[^>]+>", "", p)).strip()
            for p in re.findall(r"<p>(.*?)</p>", box.group(1), re.S)]  # fmt: skip


def test_an_error_names_its_field_once(signed_in, token) -> None:
    page = signed_in.post(BASE + "/save", data=_form(token, name="bad", uri="not a url"))
    assert page.status_code == 400
    lines = _alerts(page)
    assert any(line.startswith("properties.action.request.uri: ") for line in lines), lines
    assert not any(line.count("properties.action.request.uri") > 1 for line in lines), lines
    field = re.search(r'<label class="invalid[^"]*">URL.*?</label>', page.text, re.S)
    assert field and field.group(0).count("properties.action.request.uri") == 1
    preview = signed_in.post(UI + "/preview", data=_form(token, name="p", frequency="Hour",
                             interval="0"), headers={"X-CSRF-Token": token}).json()  # fmt: skip
    (error,) = preview["errors"]
    assert error["text"].startswith("properties.recurrence.interval: ")
    assert error["text"].count("recurrence.interval") == 1


def test_saving_shows_every_field_error_not_only_the_first(signed_in, token, api) -> None:
    page = signed_in.post(BASE + "/save", data=_form(
        token, name="", uri="not a url", frequency="Hour", interval="0", timeZone="Mars/Base",
        startTime="yesterday"))  # fmt: skip
    assert page.status_code == 400
    text = "\n".join(_alerts(page))
    for field in ("startTime", "recurrence.interval", "recurrence.timeZone",
                  "action.request.uri", "name"):  # fmt: skip
        assert field in text, text
    assert "5 problems" in text
    box = re.search(r'id="errors">(.*?)</div>', page.text, re.S)
    assert box and not re.search(r">\s+<|^\s|\s$", box.group(1))  # pre-line: no blank lines
    for label in ("URL", r"Every \(interval\)", "Time zone", "Start time", "Job name"):
        assert re.search(rf'<label class="invalid[^"]*">{label}', page.text), label
