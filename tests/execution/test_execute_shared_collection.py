"""Claims of one collection at once share its read (`shared_reads`, wired into
`claims.claim` through `Executor.collections`): real Azurite, a real HTTP target, the
executor's own threads-worth of messages run at once. The collection read is the real one;
the first is held until the others have come to wait for it, so the overlap the saving
depends on is certain rather than left to timing, and every thread is joined before
anything is asserted."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from scheduler_lib.domain import CollectionRecord, JobRecord
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution import claims
from scheduler_lib.execution.execute import ExecutionReport
from scheduler_lib.store.collections import put_collection
from tests.execution.harness import COLL, RG, SUB, T0, Driver, http_action, make_job
from tests.support.http_target import HttpTarget

AT_ONCE = 6
KEY = (SUB.lower(), RG.lower(), COLL.lower())


def _until(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the claims never met"
        time.sleep(0.005)


def _jobs(driver: Driver, target: HttpTarget) -> list[JobRecord]:
    return [make_job(driver.store, http_action(target.url), name=f"j{i}") for i in range(AT_ONCE)]


def _disable(driver: Driver) -> None:
    disabled = CollectionRecord(SUB, RG, COLL, "westeurope", properties={"state": "Disabled"})
    put_collection(driver.store, disabled)


def _run_at_once(driver: Driver, messages: list[ExecutionMessage]) -> list[ExecutionReport]:
    reports: list[ExecutionReport] = []
    lock = threading.Lock()

    def run(message: ExecutionMessage) -> None:
        report = driver.run(message)
        with lock:
            reports.append(report)

    threads = [threading.Thread(target=run, args=(m,)) for m in messages]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return reports


def _held_first_read(
    driver: Driver, monkeypatch: pytest.MonkeyPatch, waiting_for: int
) -> list[str]:
    """The collection reads the claims send (their names); the first held until
    `waiting_for` other claims wait on it."""
    real, sent = claims.get_collection, []
    shared = driver.runtime.executor.collections

    def read(*args: object) -> CollectionRecord:
        sent.append(str(args[-1]))
        if len(sent) == 1:
            _until(lambda: shared.waiting(KEY) >= waiting_for)
        return real(*args)  # type: ignore[arg-type]  # the store and three names, passed on

    monkeypatch.setattr(claims, "get_collection", read)
    return sent


def test_claims_of_one_collection_at_once_send_one_collection_read(
    driver: Driver, target: HttpTarget, monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs = [
        make_job(driver.store, http_action(target.url), name=f"job-{i}") for i in range(AT_ONCE)
    ]
    sent = _held_first_read(driver, monkeypatch, waiting_for=AT_ONCE - 1)

    reports = _run_at_once(driver, [ExecutionMessage.scheduled(j.key, T0, 1) for j in jobs])

    assert sorted(r.disposition for r in reports) == ["Ran"] * AT_ONCE
    assert len(target.requests) == AT_ONCE and sent == [COLL]
    assert driver.runtime.executor.collections.shared == AT_ONCE - 1


def test_a_collection_disabled_before_the_claims_is_seen_by_every_one_of_them(
    driver: Driver, target: HttpTarget, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shared read is one that started after the change: all the claims skip."""
    jobs = [
        make_job(driver.store, http_action(target.url), name=f"job-{i}") for i in range(AT_ONCE)
    ]
    put_collection(
        driver.store,
        CollectionRecord(SUB, RG, COLL, "westeurope", properties={"state": "Disabled"}),
    )
    _held_first_read(driver, monkeypatch, waiting_for=AT_ONCE - 1)

    reports = _run_at_once(driver, [ExecutionMessage.scheduled(j.key, T0, 1) for j in jobs])

    assert len(reports) == AT_ONCE and "Ran" not in {r.disposition for r in reports}
    assert target.requests == []


def test_claims_one_after_another_each_read_the_collection(
    driver: Driver, target: HttpTarget, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing is kept: a claim after another's read has ended reads for itself, so a
    collection disabled between two occurrences stops the second."""
    first, second = (
        make_job(driver.store, http_action(target.url), name=name) for name in ("a", "b")
    )
    assert driver.run(ExecutionMessage.scheduled(first.key, T0, 1)).disposition == "Ran"
    put_collection(
        driver.store,
        CollectionRecord(SUB, RG, COLL, "westeurope", properties={"state": "Disabled"}),
    )
    assert driver.run(ExecutionMessage.scheduled(second.key, T0, 1)).disposition != "Ran"
    assert len(target.requests) == 1 and driver.runtime.executor.collections.shared == 0
