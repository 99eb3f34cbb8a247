"""/api/docs in a real browser: Debian's Chromium (headless, driven by Playwright through
`executable_path`; no browser is downloaded) renders the page from the live API server and
lists every operation of the OpenAPI document. Every request to another host is refused and
recorded, so the test proves the page works offline even on a machine with internet.

Without Chromium (or the `playwright` package) these tests are skipped with the reason in
the summary; `.ci/run` installs Chromium, so CI always runs them.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx
import pytest

from tests.support.browser import (
    CHROMIUM,
    CHROMIUM_FLAGS,
    needs_chromium,
    only_this_app,
    playwright,
)

pytestmark = needs_chromium
RENDER_TIMEOUT_MS = 30_000


@pytest.fixture
def page():
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            yield browser.new_page(viewport={"width": 1280, "height": 2400})
        finally:
            browser.close()


def test_the_docs_page_lists_every_operation_offline(server, page, tmp_path):
    origin = urlsplit(server.base_url).netloc
    foreign = only_this_app(page, origin)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    document = httpx.get(server.api_url + "/openapi.json").json()
    expected = {
        (method.upper(), path)
        for path, operations in document["paths"].items()
        for method in operations
    }

    page.goto(server.api_url + "/docs")
    page.wait_for_selector(".opblock-summary-path", timeout=RENDER_TIMEOUT_MS)
    page.screenshot(path=str(tmp_path / "api-docs.png"), full_page=True)
    rendered = {
        tuple(pair)
        for pair in page.eval_on_selector_all(
            ".opblock",
            """blocks => blocks.map(b => [
                   b.querySelector('.opblock-summary-method').textContent.trim(),
                   b.querySelector('.opblock-summary-path').getAttribute('data-path')])""",
        )
    }

    assert foreign == [] and errors == []
    assert page.title() == f"{document['info']['title']} - Swagger UI"
    assert rendered == expected
    assert page.locator(".errors-wrapper").count() == 0  # Swagger UI's "could not render"
    favicon = page.eval_on_selector("link[rel~='icon']", "link => link.href")
    assert urlsplit(favicon).netloc == origin
    assert (tmp_path / "api-docs.png").stat().st_size > 10_000


def test_the_docs_page_offers_each_api_version(server, page):
    """Choosing 2026-12-01 loads its document (with the extension schemas) into the page."""
    page.goto(server.api_url + "/docs")
    page.wait_for_selector(".opblock-summary-path", timeout=RENDER_TIMEOUT_MS)
    assert page.evaluate("ui.specSelectors.specJson().toJS().info.version") == "2016-03-01"
    page.select_option("#api-version-picker select", label="2026-12-01")
    page.wait_for_function(
        "ui.specSelectors.specJson().toJS().info.version === '2026-12-01'",
        timeout=RENDER_TIMEOUT_MS,
    )
    schemas = page.evaluate("ui.specSelectors.specJson().toJS().components.schemas")
    assert "pauseNote" in schemas["JobProperties"]["properties"]
    page.wait_for_selector(".opblock-summary-path", timeout=RENDER_TIMEOUT_MS)
