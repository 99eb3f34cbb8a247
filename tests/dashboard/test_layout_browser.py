"""The dashboard's layout in a real browser (Debian's headless Chromium, see
`tests/support/browser.py`) against the app served in-process: what only a browser can tell,
such as how wide a box is drawn or whether two labels overlap. Each test is one short page
load at a typical 1280 px window; what the pages say is tested over HTTP in test_pages.py and
test_actions.py."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from urllib.parse import urlsplit

import pytest

from scheduler_lib.store import HistoryEntry, add_history, get_job
from tests.api.conftest import SUB, api_client, collection_path, job_path
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


@pytest.fixture
def page(server) -> Iterator:
    """A signed-in page on `server`, with collection `coll`; requests elsewhere refused."""
    with api_client(server) as api:
        assert api.put(collection_path(), json={"location": "local"}).status_code == 201
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            foreign = only_this_app(page, urlsplit(server.base_url).netloc)
            page.goto(f"{server.base_url}{UI}/")
            page.get_by_label("API key").fill(KEY)
            page.get_by_role("button", name="Sign in").click()
            page.get_by_role("heading", name="Overview").wait_for()
            yield page
            assert foreign == []
        finally:
            browser.close()


def test_the_url_box_takes_the_forms_whole_width(server, page) -> None:
    """A real URL (a webhook with a path and a query) fits: the box is as wide as its
    fieldset, not one 14rem column of the form's grid; so is the request body's."""
    page.goto(f"{server.base_url}{UI}/c/{SUB}/rg1/coll/new")
    form = page.locator("#job-form")
    url = form.get_by_label("URL").bounding_box()
    fieldset = form.locator("fieldset").first.bounding_box()
    assert url and fieldset
    assert url["width"] >= 0.9 * fieldset["width"], (url, fieldset)
    body = form.get_by_label("Body").bounding_box()  # a JSON body is long too
    assert body and body["width"] >= 0.9 * fieldset["width"], (body, fieldset)


def test_the_charts_legend_entries_do_not_overlap(server, page, store, clock) -> None:
    with api_client(server) as api:
        put = api.put(job_path("ping"), json={"properties": {"action": ACTION}})
        assert put.status_code in (200, 201), put.text
    record = get_job(store, SUB, "rg1", "coll", "ping")
    for index in range(2):
        due = clock.now - timedelta(minutes=2 - index)
        add_history(store, HistoryEntry(record.key, due, due + timedelta(seconds=1), due,
                                        "MainAction", "Completed", "ok", 0, index + 1))  # fmt: skip
    page.goto(f"{server.base_url}{UI}/c/{SUB}/rg1/coll/jobs/ping")
    boxes = page.locator("svg.chart g.legend > *").evaluate_all(
        "items => items.map(e => { const r = e.getBoundingClientRect();"
        " return [e.tagName, e.textContent, r.left, r.right, r.top, r.bottom]; })"
    )
    assert len(boxes) == 6  # three markers, each with its words on its right
    for tag, words, left, right, *_ in boxes:
        if tag != "text":
            continue
        following = [b for b in boxes if b[2] > left and b[1] != words]
        gap = min((b[2] - right for b in following), default=100.0)
        assert gap >= 8, f"{words!r} runs into the next entry ({gap:.1f} px apart)"
