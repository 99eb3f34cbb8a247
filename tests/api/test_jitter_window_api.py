"""Inside an occurrence's jitter window (after its scheduled second, before its jittered
start) the occurrence is still the job's next run, and every reader says so: GET's
`status.nextExecutionTime`, `POST /api/preview` of the job as GET returns it, the
preview command, the dashboard's job page (next runs), its collection page (next run) and
its editor's preview. Real HTTP,
real Azurite; the occurrence is sent ahead by a real dispatcher tick (to the real Azurite
execution queue), the clock is moved by hand."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import httpx
import pytest

from scheduler_lib.dispatch.tick import run_tick
from scheduler_lib.domain import job_key
from scheduler_lib.schedule import jittered_start, max_jitter
from scheduler_lib.store import get_job
from scheduler_lib.store.tables import TableStore
from tests.api.conftest import RG, SUB, job_body, job_path, make_collection
from tests.dashboard.conftest import UI, browser, csrf_token, sign_in
from tests.schedule.test_preview import run_cli

OCCURRENCE = datetime.fromisoformat("2026-03-04T10:00:00+00:00")
DAILY = {
    "startTime": "2026-03-01T10:00:00Z",
    "recurrence": {"frequency": "Day"},
    "maxJitter": "PT1H",
}
PAGE = f"{UI}/c/{SUB}/{RG}/coll/jobs"


def iso(instant: datetime) -> str:
    return instant.isoformat().replace("+00:00", "Z")


def _name_with_offset(
    at_least: timedelta, definition: dict = DAILY, prefix: str = "report"
) -> tuple[str, datetime]:
    """The first of a fixed list of names whose 10:00 occurrence starts that late."""
    for index in range(100):
        name = f"{prefix}{index}"
        start = jittered_start(job_key(SUB, RG, "coll", name), max_jitter(definition), OCCURRENCE)
        if start - OCCURRENCE >= at_least:
            return name, start
    raise AssertionError("no name with such an offset")


@pytest.fixture
def dashboard(server) -> Iterator[httpx.Client]:
    with browser(server) as client:
        assert sign_in(client).status_code == 303
        yield client


def _readers(
    client_ext: httpx.Client, dashboard: httpx.Client, name: str, now: datetime, tmp_path: Path
) -> dict[str, str]:
    """The next run as each reader says it at `now` (the server's clock too)."""
    job = client_ext.get(job_path(name)).json()
    found = {"GET": job["properties"]["status"]["nextExecutionTime"]}
    preview = client_ext.post("/preview", json={**job, "count": 2, "now": iso(now)})
    found["preview"] = preview.json()["executions"][0]
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job))
    done = run_cli(str(path), "--count", "2", "--now", iso(now))
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[1].split()
    found["preview command"] = f"{first[-2]}T{first[-1]}"
    page = dashboard.get(f"{PAGE}/{name}")
    runs = re.search(r'<ol class="next-runs">\s*<li>(.*?)</li>', page.text, re.S)
    assert runs, page.text
    found["job page"] = _label_start(html.unescape(runs.group(1)))
    listing = dashboard.get(f"{UI}/c/{SUB}/{RG}/coll").text
    cells = r"</a></td>\s*<td>.*?</td>\s*<td>.*?</td>\s*<td>(.*?)</td>"
    row = re.search(f">{name}{cells}", listing, re.S)
    assert row, listing
    found["collection page"] = _label_start(html.unescape(row.group(1)))
    edit = dashboard.get(f"{PAGE}/{name}/edit")
    form = {"mode": "json", "json": json.dumps({"properties": job["properties"]})}
    answer = dashboard.post(
        f"{PAGE}/{name}/preview", data=form, headers={"X-CSRF-Token": csrf_token(edit)}
    ).json()
    assert answer["errors"] == [], answer
    found["editor preview"] = answer["executions"][0]
    return found


def _label_start(label: str) -> str:
    """`2026-03-04 10:00:17 UTC (10:00 +17 s jitter)` -> `2026-03-04T10:00:17Z`."""
    day, time = label.split()[:2]
    return f"{day}T{time}Z"


MOMENTS = (
    "just after the scheduled second",
    "inside the window",
    "a second before the start",
    "at the start",
    "after the start",
)


@pytest.mark.parametrize("moment", MOMENTS)
def test_every_reader_names_the_same_next_run(
    client, client_ext, clock, settings, queue, dashboard, tmp_path, moment
) -> None:
    name, start = _name_with_offset(timedelta(seconds=10))
    make_collection(client, sku={"name": "P20Premium"})
    assert client_ext.put(job_path(name), json=job_body(**DAILY)).status_code == 201
    clock.now = OCCURRENCE - timedelta(seconds=30)
    run_tick(TableStore(settings), queue, settings, now=clock())  # sends 10:00 ahead
    record = get_job(TableStore(settings), SUB, RG, "coll", name)
    assert record.bookkeeping.sent == (OCCURRENCE,)
    assert record.next_execution_time == OCCURRENCE + timedelta(days=1)

    clock.now = {
        "just after the scheduled second": OCCURRENCE + timedelta(seconds=1),
        "inside the window": OCCURRENCE + (start - OCCURRENCE) / 2,
        "a second before the start": start - timedelta(seconds=1),
        "at the start": start,
        "after the start": start + timedelta(seconds=1),
    }[moment]
    found = _readers(client_ext, dashboard, name, clock.now, tmp_path)

    pending = clock.now < start
    tomorrow = jittered_start(record.key, max_jitter(DAILY), OCCURRENCE + timedelta(days=1))
    expected = iso(start if pending else tomorrow)
    assert found == dict.fromkeys(found, expected)


def test_a_one_off_job_inside_its_window_is_still_upcoming(
    client, client_ext, clock, settings, queue, dashboard, tmp_path
) -> None:
    """A job that runs once (no recurrence): its only occurrence, not a run "now"."""
    once = {"startTime": iso(OCCURRENCE), "maxJitter": "PT1H"}
    name, start = _name_with_offset(timedelta(seconds=10), once, "once")
    make_collection(client, sku={"name": "P20Premium"})
    assert client_ext.put(job_path(name), json=job_body(**once)).status_code == 201
    clock.now = OCCURRENCE - timedelta(seconds=30)
    run_tick(TableStore(settings), queue, settings, now=clock())
    clock.now = OCCURRENCE + (start - OCCURRENCE) / 2

    found = _readers(client_ext, dashboard, name, clock.now, tmp_path)

    assert found == dict.fromkeys(found, iso(start))
