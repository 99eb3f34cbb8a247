"""The collection page's bulk buttons and tag filter in a real browser (Debian's headless
Chromium, `tests/support/browser.py`) against the app served in-process on Azurite: a person
filters the list by tag, ticks jobs (or "Select all shown"), presses Disable, Run now,
Enable or Delete, and reads one line per job saying what happened. The buttons are plain
forms, so the same works with JavaScript off; with it on, "Select all shown" ticks the rows."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from scheduler_lib.config import Settings
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution import ExecutionQueue
from tests.api.conftest import EXTENSIONS_VERSION, SUB, api_client, collection_path, job_path
from tests.dashboard.conftest import KEY, UI
from tests.support.browser import (
    CHROMIUM,
    CHROMIUM_FLAGS,
    needs_chromium,
    only_this_app,
    playwright,
)

pytestmark = needs_chromium
ACTION = {"type": "Http", "request": {"method": "GET", "uri": "http://127.0.0.1:9/"}}
TIMING = {"startTime": "2026-03-04T10:00:00Z", "recurrence": {"frequency": "Hour"}}
JOBS = {"api-a": ("Enabled", "prod"), "api-b": ("Disabled", "prod"), "web-c": ("Enabled", "dev")}


def open_page(server, *, javascript: bool) -> Iterator:
    """A signed-in page on the collection `coll` holding `JOBS`; requests elsewhere refused."""
    with api_client(server, version=EXTENSIONS_VERSION) as api:
        assert api.put(collection_path(), json={"location": "local"}).status_code == 201
        for name, (state, env) in JOBS.items():
            body = {"properties": {"action": ACTION, **TIMING, "state": state,
                                   "tags": {"env": env}}}  # fmt: skip
            assert api.put(job_path(name), json=body).status_code == 201
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            context = browser.new_context(
                viewport={"width": 1280, "height": 900}, java_script_enabled=javascript
            )
            page = context.new_page()
            foreign = only_this_app(page, urlsplit(server.base_url).netloc)
            page.goto(f"{server.base_url}{UI}/")
            page.get_by_label("API key").fill(KEY)
            page.get_by_role("button", name="Sign in").click()
            page.get_by_role("heading", name="Overview").wait_for()
            page.goto(f"{server.base_url}{UI}/c/{SUB}/rg1/coll")
            yield page
            assert foreign == []
        finally:
            browser.close()


@pytest.fixture
def page(server) -> Iterator:
    yield from open_page(server, javascript=False)


@pytest.fixture
def scripted(server) -> Iterator:
    yield from open_page(server, javascript=True)


def states(server) -> dict[str, str]:
    with api_client(server, version=EXTENSIONS_VERSION) as api:
        listed = api.get(collection_path() + "/jobs").json()["value"]
    return {j["name"].split("/")[1]: j["properties"]["state"] for j in listed}


def results(page) -> dict[str, str]:
    rows = page.locator("section.bulk-results tr.outcome-row")
    return {
        rows.nth(i).locator("td").nth(0).inner_text(): rows.nth(i).locator("td").nth(1).inner_text()
        for i in range(rows.count())
    }


def test_without_javascript_filter_by_tag_select_all_disable_run_and_delete(
    server, page, settings: Settings
) -> None:
    page.get_by_label("Tag name").fill("env")
    page.get_by_label("Tag value").fill("prod")
    page.get_by_role("button", name="Filter").click()
    assert page.locator("table.jobs tbody tr").count() == 2  # web-c (dev) is not listed
    page.get_by_label("Select all shown").check()  # no script: the server reads it
    page.get_by_role("button", name="Disable", exact=True).click()
    assert results(page) == {"api-a": "Succeeded", "api-b": "Skipped"}
    assert "Disable: 1 Succeeded, 1 Skipped" in page.locator("section.bulk-results h2").inner_text()
    assert states(server) == {"api-a": "Disabled", "api-b": "Disabled", "web-c": "Enabled"}
    assert page.get_by_label("Tag value").input_value() == "prod"  # the same list again

    page.get_by_label("Select api-b").check()
    page.get_by_role("button", name="Run now").click()
    assert results(page) == {"api-b": "Succeeded"}
    [queued] = ExecutionQueue(settings).receive(max_messages=5)
    message = ExecutionMessage.from_json(queued.body)
    assert message.manual and message.job_key.endswith("|api-b")

    page.get_by_label("Select api-a").check()
    page.get_by_role("button", name="Delete").click()  # not confirmed: nothing happens
    assert "type delete" in page.get_by_role("alert").inner_text()
    assert page.get_by_label("Select api-a").is_checked()  # the ticks are kept
    page.get_by_label("Type delete to confirm").fill("delete")
    page.get_by_role("button", name="Delete").click()
    assert results(page) == {"api-a": "Succeeded"}
    assert set(states(server)) == {"api-b", "web-c"}


def test_with_javascript_select_all_ticks_every_row_and_enable_reports_each(
    server, scripted
) -> None:
    scripted.get_by_label("Select all shown").check()
    boxes = scripted.locator("table.jobs tbody input[name=job]")
    assert boxes.count() == 3 and all(boxes.nth(i).is_checked() for i in range(3))
    scripted.get_by_label("Select web-c").uncheck()
    scripted.get_by_label("Select all shown").evaluate("box => { box.checked = false; }")
    scripted.get_by_role("button", name="Enable", exact=True).click()
    assert results(scripted) == {"api-a": "Skipped", "api-b": "Succeeded"}
    assert "already Enabled" in scripted.locator("section.bulk-results").inner_text()
    tags = scripted.locator("table.jobs td.tags").all_inner_texts()
    assert tags == ["env=prod", "env=prod", "env=dev"]
