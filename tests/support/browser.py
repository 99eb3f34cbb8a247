"""Headless Chromium for the browser tests: Debian's `chromium` driven by Playwright through
`executable_path` (no browser is downloaded), or a loud skip saying why not.

    from tests.support.browser import CHROMIUM, CHROMIUM_FLAGS, needs_chromium, playwright
    pytestmark = needs_chromium
"""

from __future__ import annotations

import shutil

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
