"""Headless Chromium for the browser tests: Debian's `chromium` driven by Playwright through
`executable_path` (no browser is downloaded), or a loud skip saying why not.

    from tests.support.browser import CHROMIUM, CHROMIUM_FLAGS, needs_chromium, playwright
    pytestmark = needs_chromium
    ...
    foreign = only_this_app(page, origin)  # requests to other hosts: refused, listed
"""

from __future__ import annotations

import shutil
from urllib.parse import urlsplit

import pytest

CHROMIUM = shutil.which("chromium")
#: Marks a module's tests to be skipped, with the reason in the summary, without Chromium.
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="BROWSER TEST NOT RUN: Chromium is not installed "
    "(`apt-get install -y chromium`; .ci/run installs it)",
)
playwright = pytest.importorskip(
    "playwright.sync_api",
    reason="BROWSER TEST NOT RUN: the `playwright` package is missing (requirements-dev.txt)",
)
#: Headless as root, and no calls home (background networking tries to reach Google).
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def only_this_app(page, origin: str) -> list[str]:
    """Let `page` reach `origin` (host:port) only: every request to another host is aborted
    and its URL recorded in the list returned, which a test asserts stays empty (the page
    works offline, even on a machine with internet)."""
    foreign: list[str] = []

    def route(request_route) -> None:
        if urlsplit(request_route.request.url).netloc == origin:
            request_route.continue_()
        else:
            foreign.append(request_route.request.url)
            request_route.abort()

    page.route("**/*", route)
    return foreign
