"""A batch message's members read their jobs together (`claims.member_jobs`: 14 of a
collection to a request) where each member read its own, and a job changed after that read
is read again by its claim (the claim's write is conditional on the ETag read).

Real Azurite and a real local HTTP server, through the worker's composition root; the jobs
table's real client is counted, not replaced. Assertions run after the invocation returned,
i.e. once every member's thread ended."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from scheduler_lib.domain import JobState
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution import claims
from scheduler_lib.store.jobs import TABLE, put_job
from tests.execution.harness import T0, Driver, FakeClock, http_action, make_job
from tests.support.http_target import HttpTarget


@pytest.fixture
def fine_clock(driver: Driver) -> FakeClock:
    """1 ms a reading: members reading it from several threads stay inside their second."""
    driver.clock.tick = timedelta(milliseconds=1)
    driver.clock.now = T0 + timedelta(milliseconds=500)
    return driver.clock


def _count_reads(driver: Driver, monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    table, calls = driver.runtime.store.table(TABLE), Counter[str]()

    def counted(name: str) -> Callable[..., Any]:
        real = getattr(table, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return real(*args, **kwargs)

        return call

    for name in ("get_entity", "query_entities"):
        monkeypatch.setattr(table, name, counted(name))
    return calls


def test_twenty_members_of_one_collection_read_their_jobs_in_two_requests(
    driver: Driver, target: HttpTarget, fine_clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs = [make_job(driver.store, http_action(target.url), name=f"Job-{i}") for i in range(20)]
    messages = [ExecutionMessage.scheduled(job.key, T0, 1, job.incarnation) for job in jobs]
    reads = _count_reads(driver, monkeypatch)

    reports = driver.run_batch(messages)

    assert [report.disposition for report in reports] == ["Ran"] * 20
    assert reads == {"query_entities": 2}  # 14 and 6; no member read its job itself
    assert len(target.requests) == 20
    for job in jobs:
        assert driver.job(job.key).execution_count == 1


def test_a_job_disabled_after_the_batch_read_it_does_not_run(
    driver: Driver, target: HttpTarget, fine_clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batch reads the jobs, then the API disables one before its member claims it:
    the claim's conditional write fails, the member reads the job again and drops it."""
    jobs = [make_job(driver.store, http_action(target.url), name=f"Job-{i}") for i in range(4)]
    messages = [ExecutionMessage.scheduled(job.key, T0, 1, job.incarnation) for job in jobs]
    real = claims.member_jobs

    def then_disabled(*args: Any) -> dict[str, Any]:
        known = real(*args)
        put_job(driver.store, replace(driver.job(jobs[1].key), state=JobState.DISABLED))
        return known

    monkeypatch.setattr(claims, "member_jobs", then_disabled)

    reports = driver.run_batch(messages)

    assert [report.disposition for report in reports][::2] == ["Ran", "Ran"]
    assert reports[1].disposition != "Ran" and reports[3].disposition == "Ran"
    assert len(target.requests) == 3
    assert driver.job(jobs[1].key).execution_count == 0
