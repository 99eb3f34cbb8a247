"""The dashboard in a real browser against the real local host: Debian's Chromium (headless,
driven by Playwright through `executable_path`; nothing is downloaded) on `devtools.devhost`
in its own process with Azurite, the dispatcher and the executor, and a real HTTP target.

A person's first session: sign in with the key, create a collection, create a job with the
form while the live preview shows its next runs, watch it fire (a history row, a point of
the chart), disable it, run it now, delete it. Every page is saved as a screenshot under the
test's tmp dir (paths printed), and the assertions are on what the page shows.

Without Chromium (or the `playwright` package) it is skipped with the reason in the summary;
`.ci/run` installs Chromium, so CI always runs it.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.devtools.test_devhost import KEY, devhost  # noqa: F401  (the fixture)
from tests.support.browser import (
    CHROMIUM,
    CHROMIUM_FLAGS,
    needs_chromium,
    only_this_app,
    playwright,
)
from tests.support.http_target import HttpTarget

pytestmark = needs_chromium
expect = playwright.expect
TIMEOUT_MS = 30_000
#: Seconds a job's first scheduled run may take to show: the host's first tick is at the next
#: minute after it started (up to 60 s after the job is saved), then the dispatch, the call
#: and its history, slow on a loaded machine. Only bounds a hang.
FIRST_TICK = 150.0
SUB = "local"


@pytest.fixture
def page():
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 1000})
            context.set_default_timeout(TIMEOUT_MS)
            yield context.new_page()
        finally:
            browser.close()


class Shots:
    """Screenshots of each page, printed so a person can look at them."""

    def __init__(self, folder: Path, page) -> None:
        self.folder, self.page, self.taken = folder, page, []

    def __call__(self, name: str) -> None:
        path = self.folder / f"{len(self.taken) + 1:02d}-{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        print(f"screenshot: {path}")
        self.taken.append(path)


def _reload_until(page, condition, *, timeout: float, what: str) -> None:
    """Reload the page until `condition(page)` holds (the executor works in another
    process; the page shows what is recorded when it is loaded)."""
    deadline = time.monotonic() + timeout
    while not condition(page):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.5)
        page.reload()


def _reload_until_history(page, rows: int, *, what: str, timeout: float = 60) -> None:
    """Reload the job's page until its history table shows at least `rows` entries."""

    def shown(p) -> bool:
        return p.locator("table.history tr.entry").count() >= rows

    _reload_until(page, shown, timeout=timeout, what=what)


def test_a_first_session_in_the_browser(devhost, page, tmp_path) -> None:  # noqa: F811
    base, _process = devhost
    ui = base + "/ui/"
    foreign = only_this_app(page, urlsplit(base).netloc)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("dialog", lambda dialog: dialog.accept())  # "Delete job ...?" is confirmed
    shot = Shots(tmp_path, page)

    with HttpTarget() as target:
        # Sign in.
        page.goto(ui)
        expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
        shot("sign-in")
        page.get_by_label("API key").fill(KEY)
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("heading", name="Overview")).to_be_visible()
        assert KEY not in page.content()

        # A collection, from the overview.
        page.get_by_label("Subscription").fill(SUB)
        page.get_by_label("Resource group").fill("demo")
        page.get_by_label("Name").fill("demo")
        shot("overview-empty")
        page.get_by_role("button", name="Create collection").click()
        expect(page.get_by_role("heading", name="Collection demo")).to_be_visible()
        expect(page.get_by_text("Collection demo is ready.")).to_be_visible()

        # A job, with the form; the preview follows the typing.
        page.get_by_role("link", name="New job").click()
        form = page.locator("#job-form")
        form.get_by_label("Job name").fill("hello")
        form.get_by_label("URL").fill(target.url_for("/hello"))
        form.get_by_label("Repeat").select_option("Minute")
        form.get_by_label("Every (interval)").fill("1")
        runs = page.locator("#preview-runs li")
        expect(runs).to_have_count(10)
        expect(page.locator("#preview-words")).to_have_text("Runs every minute UTC.")
        form.get_by_label("Every (interval)").fill("0")  # a mistake: the preview says so
        expect(page.locator("#preview-errors")).to_contain_text("interval")
        expect(runs).to_have_count(0)
        form.get_by_label("Every (interval)").fill("5")
        form.get_by_label("Stop after (runs)").fill("3")
        expect(runs).to_have_count(3)
        expect(page.locator("#preview-words")).to_have_text("Runs every 5 minutes UTC (3 times).")
        shot("new-job-form-with-preview")
        # The JSON editor holds the same job, as PUT takes it.
        page.get_by_role("button", name="JSON").click()
        editor = page.locator("textarea[name=json]")
        expect(editor).to_be_visible()
        expect(editor).to_have_value(re.compile(r'"interval": 5'))
        expect(page.locator("#job-json").get_by_label("Job name")).to_have_value("hello")
        shot("new-job-json-editor")
        page.get_by_role("button", name="Form").click()
        form.get_by_role("button", name="Save job").click()
        expect(page.get_by_role("heading", name="Job hello")).to_be_visible()
        expect(page.get_by_text("every 5 minutes UTC (3 times)")).to_be_visible()

        # Without a startTime it runs at the next tick: the target is called, the page shows it.
        [request] = target.wait_for_requests(1, timeout=FIRST_TICK)
        assert request.path == "/hello" and request.header("x-ms-execution-tag")
        _reload_until_history(page, 1, what="the first history row")
        row = page.locator("table.history tr.entry").first
        expect(row).to_contain_text("Completed")
        expect(row).to_contain_text("200")
        expect(page.locator("svg.chart circle.lateness")).to_have_count(1)
        page.locator("tr.detail summary").first.click()
        expect(page.locator("tr.detail pre.message").first).to_contain_text(
            "Response from host '127.0.0.1': '200'"
        )
        expect(page.locator("tr.detail").first).to_contain_text(
            request.header("x-ms-execution-tag")
        )
        expect(page.locator("ol.next-runs li")).to_have_count(2)  # 3 times, one done
        shot("job-with-history-and-chart")

        # Disable, enable, run now.
        page.get_by_role("button", name="Disable").click()
        expect(page.get_by_text("Job hello is Disabled.")).to_be_visible()
        expect(page.locator("h1 .state")).to_have_text("Disabled")
        page.get_by_role("button", name="Enable").click()
        expect(page.locator("h1 .state")).to_have_text("Enabled")
        page.get_by_role("button", name="Run now").click()
        expect(page.get_by_text("Job hello was queued to run now.")).to_be_visible()
        target.wait_for_requests(2, timeout=60)
        _reload_until_history(page, 2, what="the manual run's history row")
        expect(page.locator("table.history tr.entry")).to_have_count(2)
        shot("job-after-run-now")

        # The collection and its timeline.
        page.get_by_role("link", name="demo").first.click()
        jobs = page.locator("table.jobs tbody tr")
        expect(jobs).to_have_count(1)
        expect(jobs.first).to_contain_text("every 5 minutes UTC (3 times)")
        expect(jobs.first.locator("svg.sparkline rect")).to_have_count(2)
        shot("collection")
        page.get_by_role("link", name="Upcoming runs timeline").click()
        expect(page.locator("svg.timeline rect.bar")).to_have_count(2)  # the 2 runs left
        shot("timeline")
        page.goto(ui)
        expect(page.locator("table").first).to_contain_text("1 of 50")
        shot("overview")

        # Delete, confirmed.
        page.goto(page.url.split("/api/ui/")[0] + f"/api/ui/c/{SUB}/demo/demo/jobs/hello")
        page.get_by_text("Delete…").click()
        page.get_by_label("Type the job's name to confirm").fill("hello")
        page.get_by_role("button", name="Delete job").click()
        expect(page.get_by_text("Job hello was deleted.")).to_be_visible()
        expect(page.locator("table.jobs")).to_have_count(0)
        shot("collection-after-delete")

    assert foreign == [] and errors == []
    assert len(shot.taken) == 10 and all(p.stat().st_size > 5_000 for p in shot.taken)


def test_see_why_a_job_failed_and_fix_it(devhost, page, tmp_path) -> None:  # noqa: F811
    base, _process = devhost
    shot = Shots(tmp_path, page)
    with HttpTarget() as target:
        target.reply(500, "database is down", path="/broken")
        page.goto(base + "/ui/")
        page.get_by_label("API key").fill(KEY)
        page.get_by_role("button", name="Sign in").click()
        page.get_by_label("Subscription").fill(SUB)
        page.get_by_label("Resource group").fill("ops")
        page.get_by_label("Name").fill("ops")
        page.get_by_role("button", name="Create collection").click()
        page.get_by_role("link", name="New job").click()
        form = page.locator("#job-form")
        form.get_by_label("Job name").fill("nightly")
        form.get_by_label("URL").fill(target.url_for("/broken"))
        form.get_by_label("Policy").select_option("None")
        form.get_by_role("button", name="Save job").click()
        expect(page.get_by_role("heading", name="Job nightly")).to_be_visible()
        _reload_until_history(page, 1, what="the failed run's history row", timeout=FIRST_TICK)
        row = page.locator("table.history tr.entry").first
        expect(row).to_contain_text("Failed")
        expect(row).to_contain_text("500")
        page.locator("tr.detail summary").first.click()
        expect(page.locator("tr.detail pre.message").first).to_contain_text("database is down")
        shot("job-failed")
        page.get_by_role("link", name="Overview").first.click()
        expect(page.get_by_label("Jobs needing attention")).to_contain_text(
            "ops / nightly: failing streak: 1 consecutive failure, failing now"
        )
        shot("overview-needs-attention")

        # Fix it: point it at a working URL, run it now.
        page.get_by_role("link", name="ops / nightly").click()
        page.get_by_role("link", name="Edit").click()
        page.locator("#job-form").get_by_label("URL").fill(target.url_for("/fixed"))
        page.locator("#job-form").get_by_role("button", name="Save job").click()
        expect(page.get_by_text("Job nightly was saved.")).to_be_visible()
        page.get_by_role("button", name="Run now").click()
        target.wait_for_requests(2, timeout=60)

        def fixed(p) -> bool:
            return "Completed" in p.locator("table.history tr.entry").first.inner_text()

        _reload_until(page, fixed, timeout=60, what="the fixed run's history row")
        expect(page.locator("table.history tr.entry")).to_have_count(2)
        shot("job-fixed")
    assert [r.path for r in target.requests] == ["/broken", "/fixed"]

    # A job with maxJitter (api-version 2026-12-01): its next runs show the offset.
    job = {
        "properties": {
            "maxJitter": "PT60S",
            "startTime": "2026-01-01T00:00:00Z",
            "recurrence": {"frequency": "Day", "schedule": {"hours": [10], "minutes": [0]}},
            "action": {"type": "Http", "request": {"method": "GET", "uri": target.url_for("/")}},
        }
    }
    put = httpx.put(f"{base}/subscriptions/{SUB}/resourceGroups/ops/providers/Microsoft.Scheduler/"
                    "jobCollections/ops/jobs/spread?api-version=2026-12-01", json=job,
                    headers={"Authorization": f"Bearer {KEY}"}, timeout=30)  # fmt: skip
    assert put.status_code == 201, put.text
    starts = put.json()["properties"]["status"]["nextExecutionTime"]  # the jittered start
    page.goto(base + f"/ui/c/{SUB}/ops/ops/jobs/spread")
    offset = int(starts[17:19])  # daily at 10:00:00, so the seconds are the offset
    shown = starts.replace("T", " ").replace("Z", " UTC")
    shown += f" (10:00 +{offset} s jitter)" if offset else ""
    expect(page.locator("ol.next-runs li").first).to_have_text(shown)
    shot("job-with-jitter")
