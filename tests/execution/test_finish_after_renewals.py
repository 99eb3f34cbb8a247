"""An attempt whose lease was renewed while its action ran updates the job from the last
renewal (`Heartbeat.stop` returns it, the renewals stopped first): one conditional write,
where the update started from the claim failed on the renewal's ETag and read the job again.
A batch's members do the same.

Real Azurite tables, a real local HTTP server holding each answer back for a second, and the
heartbeat's real thread beating every 0.2 s; requests are counted by the cost benchmark's
hook (`storage_calls`) on the runtime's real clients, after the invocation returned."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from scheduler_lib import storage_calls
from scheduler_lib.domain.messages import ExecutionMessage
from tests.execution.harness import T0, Driver, http_action, make_job
from tests.support.http_target import HttpTarget
from tests.support.storage_counts import methods_since


@pytest.fixture
def slow(
    driver: Driver, target: HttpTarget, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Driver:
    """The driver counting requests, its heartbeat beating every 0.2 s, its clock 1 ms a
    reading, and the target answering after a second (five beats or so per attempt)."""
    monkeypatch.setenv(storage_calls.COUNT_CALLS_SETTING, str(tmp_path / "calls.json"))
    driver.clock.tick = timedelta(milliseconds=1)
    driver.clock.now = T0 + timedelta(milliseconds=500)
    target.reply(200, b"ok", delay=1.0)
    driver.runtime.executor = replace(driver.runtime.executor, beat=0.2)
    return driver


def test_the_update_after_renewals_is_one_write_without_a_read(
    slow: Driver, target: HttpTarget
) -> None:
    job = make_job(slow.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1, job.incarnation)
    before = storage_calls.snapshot()

    report = slow.run(message)

    assert report.disposition == "Ran"
    renewals = methods_since(before, "execution.heartbeat: store.jobs [table ")
    assert renewals["PUT"] >= 2  # it was renewed meanwhile
    # The read before the wait, the claim at the second, the update: nothing read again.
    assert methods_since(before, "execute: store.jobs [table ") == {"GET": 1, "PUT": 2}
    assert slow.job(job.key).execution_count == 1


def test_a_batch_s_members_update_their_jobs_without_a_read(
    slow: Driver, target: HttpTarget
) -> None:
    jobs = [make_job(slow.store, http_action(target.url), name=f"Job-{i}") for i in range(4)]
    messages = [ExecutionMessage.scheduled(job.key, T0, 1, job.incarnation) for job in jobs]
    before = storage_calls.snapshot()

    reports = slow.run_batch(messages)

    assert [report.disposition for report in reports] == ["Ran"] * 4
    renewals = methods_since(before, "execution.heartbeat: store.jobs [table ")
    assert renewals["PUT"] + renewals["batch POST"] >= 2
    executed = methods_since(before, "execute: store.jobs [table ")
    executed += methods_since(before, "execute_queued: store.jobs [table ")
    # Their jobs were read by the batch's one query (`store.job_reads`): no point read again.
    assert executed["GET"] == 0
    for job in jobs:
        assert slow.job(job.key).execution_count == 1
