"""Date-times at the ends of the calendar (years 1 and 9999, offsets up to +-14:00, time
zones that move them past either end) in every field a user gives one: each request is
answered, a 400 naming the field when the instant does not exist in UTC, never a 500 (real
HTTP, real Azurite; hypothesis draws the values, a few fixed cases pin the reported ones).

Year 1 at +14:00 is 31 December of year 0 in UTC, and 9999-12-31T23:59:59-14:00 is in year
10000: Python's datetime cannot hold either, so each reader of a user's time must say so as
a ValidationError rather than raise OverflowError.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.api.conftest import SUB, arm_error, job_body, job_path, make_collection
from tests.dashboard.conftest import UI, browser, sign_in


#: Offsets as ISO writes them, the two extremes more often than the rest.
def _offset(minutes: int) -> str:
    sign = "+" if minutes >= 0 else "-"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


OFFSETS = st.one_of(
    st.sampled_from(["+14:00", "-14:00", "Z", ""]),
    st.integers(-14 * 60, 14 * 60).map(_offset),
)


@st.composite
def extreme_times(draw: st.DrawFn) -> str:
    """An ISO date-time (or date) within a day of the calendar's ends."""
    if draw(st.booleans()):
        day = draw(st.sampled_from(["0001-01-01", "0001-01-02"]))
    else:
        day = draw(st.sampled_from(["9999-12-31", "9999-12-30"]))
    if draw(st.integers(0, 9)) == 0:
        return day
    hour = draw(st.sampled_from([0, 9, 10, 13, 14, 23]))
    minute, second = draw(st.sampled_from([(0, 0), (59, 59), (30, 0)]))
    fraction = draw(st.sampled_from(["", ".5", ".999999"]))
    return f"{day}T{hour:02d}:{minute:02d}:{second:02d}{fraction}{draw(OFFSETS)}"


ZONES = st.sampled_from([None, "Pacific/Kiritimati", "Etc/GMT+12", "America/New_York", "UTC"])
RECURRENCES = st.sampled_from([None, "Minute", "Hour", "Day", "Month"])
JITTERS = st.sampled_from([None, "PT30S", "PT59S"])
FUZZ = settings(
    max_examples=40,
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)


@pytest.fixture
def coll(client: httpx.Client) -> None:
    make_collection(client, sku={"name": "P20Premium"})


@pytest.fixture
def dashboard(server) -> Iterator[httpx.Client]:
    with browser(server) as client:
        assert sign_in(client).status_code == 303
        yield client


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def answered(response: httpx.Response, *fields: str) -> dict[str, Any] | None:
    """No 5xx; a 400 names one of `fields` (an ARM error body). The error, when there is one."""
    assert response.status_code < 500, response.text
    if response.status_code == 400:
        error = arm_error(response, 400)
        assert error["target"] in fields, error
        return error
    return None


def backfill(client: httpx.Client, start: str, end: str) -> httpx.Response:
    return client.post(job_path("hourly") + "/backfill", json={"from": start, "to": end})


@pytest.fixture
def hourly(client_ext: httpx.Client, coll: None) -> None:
    body = job_body(startTime="2026-03-01T00:00:00Z", recurrence={"frequency": "Hour"})
    assert client_ext.put(job_path("hourly"), json=body).status_code == 201


@pytest.mark.parametrize(
    ("start", "end", "field"),
    [
        ("0001-01-01T00:00:00+14:00", "2026-03-03T00:00:00Z", "from"),
        ("2026-03-03T00:00:00Z", "0001-01-01T00:00:00+14:00", "to"),
        ("9999-12-31T23:59:59-14:00", "2026-03-03T00:00:00Z", "from"),
        ("2026-03-01T00:00:00Z", "9999-12-31T23:59:59-14:00", "to"),
    ],
)
def test_a_backfill_beyond_the_calendar_names_the_field(
    client_ext: httpx.Client, hourly: None, start: str, end: str, field: str
) -> None:
    error = arm_error(backfill(client_ext, start, end), 400)
    assert error["target"] == field and "out of range" in error["message"]


def test_backfill_ranges_at_the_ends_are_answered(client_ext: httpx.Client, hourly: None) -> None:
    @given(start=extreme_times() | st.just("2026-03-03T00:00:00Z"),
           end=extreme_times() | st.just("2026-03-03T12:00:00Z"))  # fmt: skip
    @FUZZ
    def check(start: str, end: str) -> None:
        answered(backfill(client_ext, start, end), "from", "to")

    check()


@pytest.mark.parametrize("when", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"])
def test_a_scheduled_enqueue_time_beyond_the_calendar_names_the_field(
    client: httpx.Client, coll: None, when: str
) -> None:
    """`scheduledEnqueueTimeUtc` names an instant: it must exist in UTC, or the executor
    could not send the message."""
    action = {"type": "ServiceBusQueue", "serviceBusQueueMessage": {
        "queueName": "q", "namespace": "contoso-bus", "message": "hi",
        "authentication": {"sasKeyName": "k", "sasKey": "secret"},
        "brokeredMessageProperties": {"scheduledEnqueueTimeUtc": when}}}  # fmt: skip
    error = arm_error(client.put(job_path(), json=job_body(action=action)), 400)
    assert error["target"] == (
        "properties.action.serviceBusQueueMessage.brokeredMessageProperties.scheduledEnqueueTimeUtc"
    )
    assert "out of range" in error["message"]


@pytest.mark.parametrize(
    ("properties", "latest"),
    [
        ({"startTime": "9999-12-31T23:59:59Z", "maxJitter": "PT30S"}, "9999-12-31T23:59:59Z"),
        # A start in the last second is not rounded up (there is no next second): kept.
        ({"startTime": "9999-12-31T23:59:59.5Z", "maxJitter": "PT30S"},
         "9999-12-31T23:59:59.500000Z"),
        ({"startTime": "9999-12-31T23:59:30Z", "maxJitter": "PT59S",
          "recurrence": {"frequency": "Minute"}}, "9999-12-31T23:59:59Z"),
    ],
)  # fmt: skip
def test_a_jittered_job_at_the_end_of_the_calendar_is_stored_and_read(
    client_ext: httpx.Client,
    coll: None,
    dashboard: httpx.Client,
    properties: dict[str, Any],
    latest: str,
) -> None:
    """Its last run cannot start after the calendar's last second: the jittered start stops
    there (as the whole-second rounding of a start does), for every reader."""
    created = client_ext.put(job_path(), json=job_body(**properties))
    assert created.status_code == 201, created.text
    job = client_ext.get(job_path())
    assert job.status_code == 200, job.text
    start = job.json()["properties"]["status"]["nextExecutionTime"]
    assert at(properties["startTime"]) <= at(start) <= at(latest)
    if properties["startTime"].startswith("9999-12-31T23:59:59"):
        assert start == latest
    preview = client_ext.post("/preview", json={**job.json(), "now": "2026-03-04T09:00:00Z"})
    assert preview.status_code == 200, preview.text
    assert preview.json()["executions"][0] == start
    page = dashboard.get(f"{UI}/c/{SUB}/rg1/coll/jobs/job1")
    assert page.status_code == 200, page.text


def test_jobs_at_the_ends_are_answered_and_readable(
    client_ext: httpx.Client, coll: None, dashboard: httpx.Client
) -> None:
    """startTime, recurrence.endTime, the zone they are read in and maxJitter: stored or a
    400 naming a field of the job; what is stored reads back, previews and shows."""
    names = iter(range(10**6))

    @given(start=extreme_times(), end=extreme_times() | st.none(), zone=ZONES,
           frequency=RECURRENCES, jitter=JITTERS)  # fmt: skip
    @FUZZ
    def check(start: str, end: str | None, zone: str | None, frequency: str | None,
              jitter: str | None) -> None:  # fmt: skip
        properties: dict[str, Any] = {"startTime": start}
        if frequency or end or zone:
            recurrence: dict[str, Any] = {"frequency": frequency or "Day"}
            recurrence.update({k: v for k, v in (("endTime", end), ("timeZone", zone)) if v})
            properties["recurrence"] = recurrence
        if jitter:
            properties["maxJitter"] = jitter
        path = job_path(f"j{next(names)}")
        put = client_ext.put(path, json=job_body(**properties))
        answered(put, "properties.startTime", "properties.recurrence.endTime",
                 "properties.maxJitter")  # fmt: skip
        if put.status_code >= 300:
            return
        got = client_ext.get(path)
        assert got.status_code == 200, got.text
        for now in (start, end or start):
            preview = client_ext.post("/preview", json={**got.json(), "now": now})
            answered(preview, "now")
        page = dashboard.get(f"{UI}/c/{SUB}/rg1/coll/jobs/{path.rsplit('/', 1)[1]}")
        assert page.status_code == 200, page.text
        patch = client_ext.patch(path, json={"properties": {"startTime": end or start}})
        answered(patch, "properties.startTime", "properties.recurrence.endTime",
                 "properties.maxJitter")  # fmt: skip
        assert client_ext.delete(path).status_code == 200

    check()


def test_previews_at_the_ends_are_answered(client_ext: httpx.Client) -> None:
    @given(start=extreme_times() | st.none(), end=extreme_times() | st.none(),
           now=extreme_times(), zone=ZONES, frequency=RECURRENCES, jitter=JITTERS)  # fmt: skip
    @FUZZ
    def check(start: str | None, end: str | None, now: str, zone: str | None,
              frequency: str | None, jitter: str | None) -> None:  # fmt: skip
        body: dict[str, Any] = {"now": now, "count": 5}
        if start:
            body["startTime"] = start
        if frequency:
            recurrence = {"frequency": frequency, "endTime": end, "timeZone": zone}
            body["recurrence"] = {k: v for k, v in recurrence.items() if v}
        if jitter:  # with the id of a job, so that its offsets are applied
            body.update(maxJitter=jitter, id=job_path("j"))
        answered(client_ext.post("/preview", json=body), "now")

    check()
