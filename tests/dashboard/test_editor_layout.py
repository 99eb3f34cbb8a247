"""The job editor's layout in a real browser (Debian's headless Chromium, see
`tests/support/browser.py`) against the app served in-process: what only a browser can tell,
such as how wide a box is drawn. Kept to one short page load; what the pages say is tested
over HTTP in test_pages.py and test_actions.py."""

from __future__ import annotations

from urllib.parse import urlsplit

from tests.api.conftest import SUB, api_client, collection_path
from tests.dashboard.conftest import KEY, UI
from tests.support.browser import (
    CHROMIUM,
    CHROMIUM_FLAGS,
    needs_chromium,
    only_this_app,
    playwright,
)

pytestmark = needs_chromium


def test_the_url_box_takes_the_forms_whole_width(server) -> None:
    """A real URL (a webhook with a path and a query) fits: the box is as wide as its
    fieldset at a typical 1280 px window, not one 14rem column of the form's grid."""
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
            page.goto(f"{server.base_url}{UI}/c/{SUB}/rg1/coll/new")
            form = page.locator("#job-form")
            url = form.get_by_label("URL").bounding_box()
            fieldset = form.locator("fieldset").first.bounding_box()
            assert url and fieldset
            assert url["width"] >= 0.9 * fieldset["width"], (url, fieldset)
            assert foreign == []
        finally:
            browser.close()
