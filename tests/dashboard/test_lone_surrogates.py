"""The dashboard's editors refuse a lone surrogate (`\\ud800` typed into the JSON editor, or
sent by a script as a JSON form) as the REST API does, naming the field and storing nothing;
and a job an older version stored with one still shows, with U+FFFD in its place."""

from __future__ import annotations

import html
import json
from dataclasses import replace

import pytest

from scheduler_lib.domain import JobDefinition
from scheduler_lib.store import get_job, put_job
from tests.api.conftest import RG, SUB, api_client, job_path
from tests.dashboard.conftest import UI, csrf_token

BASE = f"{UI}/c/{SUB}/rg1/coll"
ACTION = {"type": "Http", "request": {"method": "POST", "uri": "http://127.0.0.1:9/"}}


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
    assert created.status_code == 303
    return token


@pytest.fixture
def api(server):
    with api_client(server) as client:
        yield client


def test_the_json_editor_refuses_it_naming_the_field(signed_in, token, api) -> None:
    action = {**ACTION, "request": {**ACTION["request"], "body": "a\ud800"}}
    text = json.dumps({"properties": {"action": action}})
    assert "\\ud800" in text  # what a person types: the escape
    saved = signed_in.post(
        BASE + "/save", data={"csrf": token, "mode": "json", "name": "j", "json": text}
    )
    assert saved.status_code == 400, saved.text
    assert "properties.action.request.body" in html.unescape(saved.text)
    assert "surrogate" in saved.text
    assert api.get(job_path("j")).status_code == 404
    preview = signed_in.post(
        UI + "/preview", data={"mode": "json", "json": text}, headers={"X-CSRF-Token": token}
    )
    assert preview.status_code == 200
    assert preview.json()["errors"][0]["target"] == "properties.action.request.body"


def test_a_form_sent_as_json_is_refused_naming_the_field(signed_in, token, api) -> None:
    form = {"csrf": token, "mode": "form", "name": "j", "method": "POST",
            "uri": "http://127.0.0.1:9/", "body": "\udc00"}  # fmt: skip
    saved = signed_in.post(
        BASE + "/save",
        content=json.dumps(form).encode(),
        headers={"content-type": "application/json"},
    )
    assert saved.status_code == 400, saved.text
    assert "surrogate" in saved.text and "body" in saved.text
    assert api.get(job_path("j")).status_code == 404


def test_a_job_stored_with_one_still_shows(signed_in, token, api, store) -> None:
    assert api.put(job_path("old"), json={"properties": {"action": ACTION}}).status_code == 201
    record = get_job(store, SUB, RG, "coll", "old")
    action = {**ACTION, "request": {**ACTION["request"], "body": "a\ud800b"}}
    definition = JobDefinition({**record.definition.document, "action": action})
    put_job(store, replace(record, definition=definition), etag=record.etag)

    page = signed_in.get(BASE + "/jobs/old")
    assert page.status_code == 200, page.text
    assert "a\\ufffdb" in page.text  # the definition is shown as JSON
    assert signed_in.get(BASE).status_code == 200
    edit = signed_in.get(BASE + "/jobs/old/edit")
    assert edit.status_code == 200, edit.text
    assert "a\\ufffdb" in edit.text  # the JSON editor writes it as an escape
