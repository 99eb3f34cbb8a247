"""A batch message's members read their jobs together (`claims.member_reads`: 14 of a
collection to a request) where each member read its own, and a job changed after that read
is read again by its claim (the claim's write is conditional on the ETag read). The
collections two or more members share are read once, before the members start, where each
member's claim read its own or joined one under way.

Real Azurite and a real local HTTP server, through the worker's composition root; the jobs
table's real client is counted, not replaced. Assertions run after the invocation returned,
i.e. once every member's thread ended."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import timedelta
from typing import Any, TypeVar

import pytest

from scheduler_lib.concurrent_calls import ConcurrentCalls
from scheduler_lib.domain import JobState
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution import claims
from scheduler_lib.store import collections as collections_table
from scheduler_lib.store.jobs import TABLE, put_job
from tests.execution.harness import T0, Driver, FakeClock, http_action, make_job
from tests.support.http_target import HttpTarget

T = TypeVar("T")


@pytest.fixture
def fine_clock(driver: Driver) -> FakeClock:
    """1 ms a reading: members reading it from several threads stay inside their second."""
    driver.clock.tick = timedelta(milliseconds=1)
    driver.clock.now = T0 + timedelta(milliseconds=500)
    return driver.clock


def _count_reads(
    driver: Driver, monkeypatch: pytest.MonkeyPatch, table_name: str = TABLE
) -> Counter[str]:
    table, calls = driver.runtime.store.table(table_name), Counter[str]()

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
    real = claims.member_reads

    def then_disabled(*args: Any) -> dict[str, Any]:
        known = real(*args)
        put_job(driver.store, replace(driver.job(jobs[1].key), state=JobState.DISABLED))
        return known

    monkeypatch.setattr(claims, "member_reads", then_disabled)

    reports = driver.run_batch(messages)

    assert [report.disposition for report in reports][::2] == ["Ran", "Ran"]
    assert reports[1].disposition != "Ran" and reports[3].disposition == "Ran"
    assert len(target.requests) == 3
    assert driver.job(jobs[1].key).execution_count == 0


class _OneAfterAnother(ConcurrentCalls):
    """The calls in order on the caller's thread: no member's read overlaps another's, so
    none joins one under way (`shared_reads`), as members that start apart."""

    def run_all(self, calls: Sequence[Callable[[], T]]) -> list[T | Exception]:
        ended: list[T | Exception] = []
        for call in calls:
            try:
                ended.append(call())
            except Exception as exc:
                ended.append(exc)
        return ended


def _one_member_at_a_time(driver: Driver) -> None:
    executor = driver.runtime.executor
    driver.runtime.executor = replace(executor, members=_OneAfterAnother(1))


def test_members_that_share_a_collection_read_it_once_before_they_start(
    driver: Driver, target: HttpTarget, fine_clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twelve members of one collection and three of another: one read of each, by the
    batch; a member alone in its collection reads it in its claim, as a lone message."""
    jobs = [make_job(driver.store, http_action(target.url), name=f"Job-{i}") for i in range(12)]
    jobs += [
        make_job(driver.store, http_action(target.url), name=f"Other-{i}", collection="other")
        for i in range(3)
    ]
    jobs.append(make_job(driver.store, http_action(target.url), name="Alone", collection="alone"))
    messages = [ExecutionMessage.scheduled(job.key, T0, 1, job.incarnation) for job in jobs]
    _one_member_at_a_time(driver)
    reads = _count_reads(driver, monkeypatch, collections_table.TABLE)

    reports = driver.run_batch(messages)

    assert [report.disposition for report in reports] == ["Ran"] * 16
    assert reads == {"get_entity": 3}  # the batch's two, and the lone member's own
    assert len(target.requests) == 16


def test_a_collection_disabled_before_the_batch_read_it_runs_none_of_its_members(
    driver: Driver, target: HttpTarget, fine_clock: FakeClock
) -> None:
    jobs = [make_job(driver.store, http_action(target.url), name=f"Job-{i}") for i in range(3)]
    make_job(driver.store, http_action(target.url), name="Job-3", collection_state="Disabled")
    messages = [ExecutionMessage.scheduled(job.key, T0, 1, job.incarnation) for job in jobs]

    reports = driver.run_batch(messages)

    assert [report.disposition for report in reports] == ["Dropped"] * 3
    assert target.requests == []


def test_a_failed_batch_read_of_a_collection_leaves_it_to_each_member(
    driver: Driver, target: HttpTarget, fine_clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batch's read of the collection fails (storage refusing it once): the members
    are not stopped by it; each reads the collection in its claim and runs."""
    jobs = [make_job(driver.store, http_action(target.url), name=f"Job-{i}") for i in range(4)]
    messages = [ExecutionMessage.scheduled(job.key, T0, 1, job.incarnation) for job in jobs]
    _one_member_at_a_time(driver)
    table = driver.runtime.store.table(collections_table.TABLE)
    real, calls = table.get_entity, Counter[str]()

    def fails_first(*args: Any, **kwargs: Any) -> Any:
        calls["get_entity"] += 1
        if calls["get_entity"] == 1:
            raise ConnectionError("storage refused the batch's read")
        return real(*args, **kwargs)

    monkeypatch.setattr(table, "get_entity", fails_first)

    reports = driver.run_batch(messages)

    assert [report.disposition for report in reports] == ["Ran"] * 4
    assert calls == {"get_entity": 5}  # the batch's failed read, then each member's own
    assert len(target.requests) == 4
