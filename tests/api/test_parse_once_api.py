"""Parse once: a job PUT or PATCH parses the job's timing once — its validation's parse is
the one the schedule is built from — over real HTTP and Azurite. Counted at the engine's
parser under both names it is called by (the model's validation, the schedule); the one
other parse of a recurring job is the quota's steady-state sample, a different rule
(`job_schedule.steady_sample`), told apart by having no action."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from scheduler_lib.schedule import recurrence
from scheduler_lib.wire import timing
from tests.api.conftest import job_body, job_path, make_collection


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every call of the engine's timing parser (it still parses: nothing is faked)."""
    calls: list[dict[str, Any]] = []
    real: Callable[..., Any] = recurrence.parse_job_timing

    def counting(job: dict[str, Any]) -> Any:
        calls.append(dict(job))
        return real(job)

    monkeypatch.setattr(recurrence, "parse_job_timing", counting)
    monkeypatch.setattr(timing, "parse_job_timing", counting)
    return calls


def _of_the_job(parses: list[dict[str, Any]]) -> int:
    return sum("action" in job for job in parses)


@pytest.mark.parametrize(
    "properties",
    [
        {"startTime": "2026-03-05T10:30:00Z"},
        {"startTime": "2026-03-05T10:30:00Z", "recurrence": {"frequency": "hour", "count": 3}},
    ],
    ids=["once", "recurring"],
)
def test_a_put_parses_the_jobs_timing_once(client, parses, properties) -> None:
    make_collection(client)
    parses.clear()

    created = client.put(job_path("Ping"), json=job_body(**properties))

    assert created.status_code == 201, created.text
    assert created.json()["properties"]["status"]["nextExecutionTime"] == "2026-03-05T10:30:00Z"
    assert _of_the_job(parses) == 1  # was 2: the validation's, then the schedule's


def test_a_patch_that_changes_the_timing_parses_it_once(client, parses) -> None:
    make_collection(client)
    client.put(job_path("Ping"), json=job_body(startTime="2026-03-05T10:30:00Z"))
    parses.clear()

    patched = client.patch(job_path("Ping"), json={"properties": {"startTime": "2026-03-06"}})

    assert patched.status_code == 200, patched.text
    assert patched.json()["properties"]["status"]["nextExecutionTime"] == "2026-03-06T00:00:00Z"
    assert _of_the_job(parses) == 1


def test_an_invalid_timing_is_still_named_before_the_state(client) -> None:
    """The error precedence is unchanged: the timing is validated where it was, before the
    requested state (both wrong: the timing's field is the one named)."""
    make_collection(client)
    body = job_body(startTime="not a time", state="Paused")

    response = client.put(job_path("Ping"), json=body)

    assert response.status_code == 400
    assert response.json()["error"]["target"] == "properties.startTime"
