"""The claims of a batch's members due at one second go out together (`group_commit` through
the worker's store, `store/grouped_writes.py`): one request alone, then one transaction for
all the claims that waited behind it, instead of one request each.

Real Azurite tables and queues and a real local HTTP server, through the worker's real
composition root (`Runtime.execute_queued`). The members are delivered early and wait for
their second together (`WaitTogether`, no test sleeps); the first claim after the wait is
held in flight until every other member's claim waits behind it, so the overlap the saving
depends on is certain rather than left to timing. Every assertion runs after the invocation
returned, i.e. once every member's thread ended.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from scheduler_lib.domain import collection_key
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.store import grouped_writes
from scheduler_lib.store.jobs import TABLE
from tests.execution.harness import COLL, RG, SUB, T0, Driver, http_action, make_job
from tests.execution.test_execute_batch import WaitTogether
from tests.support.http_target import HttpTarget

MEMBERS = 8


def _record_sends(driver: Driver, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The job writes the worker sends, in order, each as the RowKeys it carries (one for a
    lone request); the first held until the others wait behind it."""
    store = driver.runtime.store
    assert store.writes is not None
    writes, key = store.writes, (store.settings.table_name(TABLE), collection_key(SUB, RG, COLL))
    sends: list[list[str]] = []
    lock = threading.Lock()
    real_one, real_group = grouped_writes.write_entity, grouped_writes._transaction

    def one(table: Any, entity: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        with lock:
            first = not sends
            sends.append([entity["RowKey"]])
        deadline = time.monotonic() + 30
        while first and writes.waiting(key) < MEMBERS - 1:
            assert time.monotonic() < deadline, "the other claims never came to wait"
            time.sleep(0.002)
        return real_one(table, entity, **kwargs)

    def group(table: Any, send_one: Any, items: list[Any]) -> Any:
        with lock:
            sends.append([entity["RowKey"] for entity, _ in items])
        return real_group(table, send_one, items)

    monkeypatch.setattr(grouped_writes, "write_entity", one)
    monkeypatch.setattr(grouped_writes, "_transaction", group)
    return sends


def test_claims_of_members_due_at_one_second_go_out_in_two_requests(
    driver: Driver, target: HttpTarget, monkeypatch: pytest.MonkeyPatch
) -> None:
    driver.clock.tick = timedelta(milliseconds=1)
    jobs = [
        make_job(driver.store, http_action(target.url), name=f"job-{i}") for i in range(MEMBERS)
    ]
    messages = [ExecutionMessage.scheduled(job.key, T0, 1, job.incarnation) for job in jobs]
    driver.clock.now = T0 - timedelta(seconds=1.5)  # the queue delivers it early
    together = WaitTogether(driver.clock, parties=MEMBERS)
    driver.runtime.executor = replace(driver.runtime.executor, sleep=together)
    sends = _record_sends(driver, monkeypatch)

    reports = driver.run_batch(messages)

    assert [report.disposition for report in reports] == ["Ran"] * MEMBERS
    assert together.met == MEMBERS and len(target.requests) == MEMBERS
    claims = sends[:2]  # nothing writes a job before the claims at the second
    assert [len(rows) for rows in claims] == [1, MEMBERS - 1]
    assert sorted(claims[0] + claims[1]) == sorted(job.name.lower() for job in jobs)
    for message in messages:
        [entry] = driver.history(message.job_key)
        assert entry.status == "Completed" and T0 <= entry.start_time < T0 + timedelta(seconds=1)
    claimed = sum(len(rows) for rows in sends)
    assert len(sends) < claimed  # the claims and the outcomes: fewer requests than writes


def test_a_lone_message_claims_with_one_plain_request(
    driver: Driver, target: HttpTarget, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = make_job(driver.store, http_action(target.url))
    sends: list[int] = []
    real_group = grouped_writes._transaction
    monkeypatch.setattr(
        grouped_writes, "_transaction", lambda *a: sends.append(1) or real_group(*a)
    )

    report = driver.run(ExecutionMessage.scheduled(job.key, T0, 1, job.incarnation))

    assert report.disposition == "Ran" and sends == []
