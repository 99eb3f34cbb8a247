"""The collection page's bulk form over HTTP as a browser posts it: refused without the
CSRF token or from another site (nothing changes), the ticked jobs sent as repeated `job`
fields, "all shown" read from the `shown` fields, and bad input shown on the page as a 400.
(The same in Chromium, with and without JavaScript: test_bulk_browser.py.)"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from tests.api.conftest import EXTENSIONS_VERSION, api_client, job_path
from tests.dashboard.test_actions import BASE, token  # noqa: F401  (the fixture)

ACTION = {"type": "Http", "request": {"method": "GET", "uri": "http://127.0.0.1:9/"}}
TIMING = {"startTime": "2026-03-04T10:00:00Z", "recurrence": {"frequency": "Hour"}}


@pytest.fixture
def jobs(server, token):  # noqa: F811  (the fixture imported above)
    with api_client(server, version=EXTENSIONS_VERSION) as api:
        for name in ("one", "two", "three"):
            body = {"properties": {"action": ACTION, **TIMING}}
            assert api.put(job_path(name), json=body).status_code == 201
        yield api


def post(client, fields: list[tuple[str, str]], **headers: str):
    """The form as a browser encodes it: a ticked box is one more `job` field."""
    content = urlencode(fields)
    kind = {"Content-Type": "application/x-www-form-urlencoded"}
    return client.post(BASE + "/bulk", content=content, headers={**kind, **headers})


def states(api) -> dict[str, str]:
    return {n: api.get(job_path(n)).json()["properties"]["state"] for n in ("one", "two", "three")}


def test_refused_without_the_token_or_from_another_site(signed_in, token, jobs):  # noqa: F811
    form = [("operation", "Disable"), ("job", "one")]
    assert post(signed_in, form).status_code == 403
    cross = post(signed_in, [("csrf", token), *form], **{"Sec-Fetch-Site": "cross-site"})
    assert cross.status_code == 403
    assert set(states(jobs).values()) == {"Enabled"}


def test_ticked_jobs_and_all_shown(signed_in, token, jobs):  # noqa: F811
    ticked = [("csrf", token), ("operation", "Disable"), ("job", "one"), ("job", "three")]
    page = post(signed_in, ticked)
    assert page.status_code == 200 and "2 Succeeded" in page.text
    assert states(jobs) == {"one": "Disabled", "two": "Enabled", "three": "Disabled"}
    shown = [("shown", n) for n in ("one", "two", "three")]
    every = post(signed_in, [("csrf", token), ("operation", "Enable"), ("all", "1"), *shown])
    assert every.status_code == 200 and "2 Succeeded, 1 Skipped" in every.text


@pytest.mark.parametrize(
    "fields, words",
    [
        ([("operation", "Disable")], "tick at least one job"),
        ([("operation", "Pause"), ("job", "one")], "operation: must be one of"),
        ([("operation", "Delete"), ("job", "one"), ("confirm", "yes")], "type delete"),
    ],
)
def test_bad_input_is_shown_and_changes_nothing(signed_in, token, jobs, fields, words):  # noqa: F811
    page = post(signed_in, [("csrf", token), *fields])
    assert page.status_code == 400 and words in page.text, page.text[-2000:]
    assert set(states(jobs).values()) == {"Enabled"}
