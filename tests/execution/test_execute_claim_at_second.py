"""An occurrence delivered early is claimed at its second, not before the wait (issue 22):
one conditional write of the job before its action instead of two (a claim before the wait,
then a write back at the second to prove nothing changed). Its watchdog is sent before the
wait, so a worker that dies in the wait leaves no claim and its watchdog runs the attempt;
a worker alive and its watchdog racing to claim run it once; the heartbeat, started with the
watchdog, renews only once the attempt is claimed.

Real Azurite tables and queue and a real local HTTP server; the wait goes through the fake
clock's `sleep` (what happens "during the wait" is done there, and a worker dying in it is
the sleep raising), so no test sleeps. The watchdog the executor sends is invisible for real
seconds: the body it sent is recorded and handed to the executor as the queue trigger would,
with the clock moved past its visibility. Job writes are counted by the cost benchmark's
hook on the real requests (`storage_calls`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path

import pytest

from scheduler_lib import storage_calls
from scheduler_lib.domain import Bookkeeping, CollectionRecord, JobDefinition
from scheduler_lib.domain.executor_state import step_claim
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution import claims, execute, heartbeat, lease, lifecycle, watchdog
from scheduler_lib.execution.execute import ExecutionReport
from scheduler_lib.execution.lifecycle import executor_state
from scheduler_lib.store.collections import put_collection
from scheduler_lib.store.execution_queue import ExecutionQueue
from scheduler_lib.store.jobs import delete_job, put_job
from tests.execution.harness import COLL, RG, SUB, T0, Driver, http_action, make_job
from tests.execution.test_execute_dedupe import WorkerKilled
from tests.support.http_target import HttpTarget

EARLY = timedelta(seconds=1.5)
#: When the watchdog an early delivery sent becomes visible: just after the lease of a claim
#: taken at the second would end.
WATCHDOG_DUE = T0 + lease.LEASE + lease.MARGIN
JOB_WRITE = "execute: store.jobs [table PUT]"


@dataclass
class Seen:
    """What the executor did: the execution-queue bodies it sent (in order), and its job
    writes from the start of the run to its action (or its end, when it ran none)."""

    sent: list[str] = field(default_factory=list)
    writes: list[int] = field(default_factory=list)

    def watchdogs(self) -> list[str]:
        return [body for body in self.sent if ExecutionMessage.from_json(body).watchdog]


def _job_writes(since: dict[str, int]) -> int:
    grown = Counter(storage_calls.snapshot())
    grown.subtract(since)
    return grown[JOB_WRITE]


@pytest.fixture
def seen(driver: Driver, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Seen:
    """Record what the executor sends and count its job writes before its action (its
    runtime's clients are built after this, with the benchmark's counting hook)."""
    monkeypatch.setenv(storage_calls.COUNT_CALLS_SETTING, str(tmp_path / "calls.json"))
    made = Seen()
    send_body, run_action = ExecutionQueue.send_body, execute.run_action

    def sending(self: ExecutionQueue, body: str, **kwargs: int) -> object:
        made.sent.append(body)
        return send_body(self, body, **kwargs)

    mark: list[dict[str, int]] = []

    def acting(*args: object, **kwargs: object) -> object:
        made.writes.append(_job_writes(mark[-1]))
        return run_action(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ExecutionQueue, "send_body", sending)
    monkeypatch.setattr(execute, "run_action", acting)
    run = driver.run

    def counted_run(message: ExecutionMessage, **kwargs: object) -> ExecutionReport:
        mark.append(storage_calls.snapshot())
        actions = len(made.writes)
        report = run(message, **kwargs)  # type: ignore[arg-type]
        if len(made.writes) == actions:  # no action ran: its writes to the end
            made.writes.append(_job_writes(mark[-1]))
        return report

    driver.run = counted_run  # type: ignore[method-assign]
    return made


def _waiting(driver: Driver, meanwhile: Callable[[], None]) -> None:
    """Have the executor's first wait call `meanwhile` (then time passes as it asked)."""
    sleep = driver.clock.sleep
    calls = [0]

    def wait(seconds: float) -> None:
        calls[0] += 1
        if calls[0] == 1:
            meanwhile()
        sleep(seconds)

    driver.clock.sleep = wait  # type: ignore[method-assign]


def _early(driver: Driver, message: ExecutionMessage, message_id: str = "m1") -> ExecutionReport:
    driver.clock.now = message.occurrence - EARLY
    return driver.run(message, message_id=message_id)


def _dies_in_the_wait(driver: Driver, message: ExecutionMessage) -> None:
    """`message` delivered early to a worker that dies in its wait (the sleep raises)."""

    def die(_seconds: float) -> None:
        raise WorkerKilled

    driver.clock.sleep = die  # type: ignore[method-assign]
    with pytest.raises(WorkerKilled):
        _early(driver, message)


def test_an_early_occurrence_writes_its_job_once_before_its_action(
    driver: Driver, target: HttpTarget, seen: Seen
) -> None:
    """The claim, at the second, is the one job write before the action (then the finish),
    as for an occurrence delivered on time; the claim starts at the second."""
    job = make_job(driver.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1)

    report = _early(driver, message)

    assert report.disposition == "Ran" and len(target.requests) == 1
    assert seen.writes == [1]
    claim = step_claim(driver.job(job.key), message)
    assert claim is not None and claim.done and claim.started >= T0
    [sent] = seen.watchdogs()
    assert ExecutionMessage.from_json(sent).before_claim
    assert driver.queue_length() == 0  # deleted when the attempt ended


def test_a_worker_that_dies_in_the_wait_is_run_by_its_watchdog(
    driver: Driver, target: HttpTarget, seen: Seen
) -> None:
    """Nothing was claimed; the watchdog it sent before the wait finds the occurrence never
    claimed and runs it at once, as a late delivery of its own (no lease to confirm, not a
    Rerun). The worker's own message, given back by the queue minutes later, is a
    Duplicate."""
    job = make_job(driver.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1)

    _dies_in_the_wait(driver, message)
    assert message.execution_tag not in executor_state(driver.job(job.key)).claims
    assert driver.queue_length() == 1  # its watchdog, left in the queue
    [body] = seen.watchdogs()

    driver.clock.now = WATCHDOG_DUE
    took = driver.execute(body, message_id="w1")

    assert took.disposition == "Ran" and len(target.requests) == 1
    assert target.requests[0].header("x-ms-execution-tag") == message.execution_tag
    [entry] = driver.history(job.key)
    assert entry.status == "Completed" and not entry.message.startswith("[Rerun]")
    claim = step_claim(driver.job(job.key), message)
    assert claim is not None and (claim.message_id, claim.done) == ("w1", True)
    original = driver.run(message, message_id="m1", dequeue_count=2)
    assert original.disposition == "Duplicate" and len(target.requests) == 1
    assert driver.job(job.key).execution_count == 1


def test_a_watchdog_later_than_the_grace_period_postpones_the_occurrence(
    late_driver: Driver, target: HttpTarget, seen: Seen
) -> None:
    """Its worker died in the wait and the watchdog came more than the grace period (here
    30 s) after the second: postponed, as any late delivery is."""
    driver = late_driver
    job = make_job(driver.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1)

    _dies_in_the_wait(driver, message)
    [body] = seen.watchdogs()

    driver.clock.now = T0 + timedelta(seconds=45)
    took = driver.execute(body, message_id="w1")

    assert took.disposition == "Postponed" and target.requests == []
    claim = step_claim(driver.job(job.key), message)
    assert claim is not None and claim.final and claim.postponed


def test_a_slow_worker_whose_watchdog_claimed_first_is_a_duplicate(
    driver: Driver, target: HttpTarget, seen: Seen
) -> None:
    """The worker's wait overran the watchdog's visibility (a stalled process): the watchdog
    claims and runs the occurrence; the worker's claim at the second, conditional on its
    early read, fails, and read again it is a Duplicate. One request."""
    job = make_job(driver.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    took: list[ExecutionReport] = []

    def stalled() -> None:
        [body] = seen.watchdogs()
        driver.clock.now = WATCHDOG_DUE
        took.append(driver.execute(body, message_id="w1"))

    _waiting(driver, stalled)

    worker = _early(driver, message)

    assert [report.disposition for report in took] == ["Ran"]
    assert (worker.disposition, worker.reason) == ("Duplicate", "the occurrence already finished")
    assert len(target.requests) == 1 and driver.job(job.key).execution_count == 1


def test_a_watchdog_whose_worker_claimed_first_is_a_duplicate(
    driver: Driver, target: HttpTarget, seen: Seen, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other order: the watchdog found the occurrence unclaimed, and the worker (alive,
    late) claimed it before the watchdog's own claim: the watchdog's claim reads the job
    again and is the Duplicate; the worker's claim stays as it wrote it."""
    job = make_job(driver.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1)

    def stop(_seconds: float) -> None:
        raise WorkerKilled  # the worker's wait, frozen here; its claim is made below

    driver.clock.sleep = stop  # type: ignore[method-assign]
    with pytest.raises(WorkerKilled):
        _early(driver, message)
    [body] = seen.watchdogs()
    look = watchdog.look

    def worker_claims_meanwhile(*args: object, **kwargs: object) -> watchdog.Look:
        found = look(*args, **kwargs)  # type: ignore[arg-type]
        claims.claim(driver.store, message, "m1", now=WATCHDOG_DUE)
        return found

    monkeypatch.setattr(watchdog, "look", worker_claims_meanwhile)
    driver.clock.now = WATCHDOG_DUE
    took = driver.execute(body, message_id="w1")

    assert (took.disposition, took.reason) == (
        "Duplicate", "another message for this attempt was already taken",
    )  # fmt: skip
    assert target.requests == []
    claim = step_claim(driver.job(job.key), message)
    assert claim is not None and claim.message_id == "m1"


def _deleted(driver: Driver, key: str, _url: str) -> None:
    delete_job(driver.store, driver.job(key))


def _disabled(driver: Driver, key: str, _url: str) -> None:
    put_job(driver.store, replace(driver.job(key), state="Disabled"))


def _created_again(driver: Driver, key: str, _url: str) -> None:
    current = driver.job(key)
    delete_job(driver.store, current)
    again = replace(current, incarnation="second", etag=None, bookkeeping=Bookkeeping())
    put_job(driver.store, again, create_only=True)


def _replaced(driver: Driver, key: str, url: str) -> None:
    current = driver.job(key)
    document = {**current.definition.document, "action": http_action(url + "/new")}
    put_job(driver.store, replace(current, definition=JobDefinition(document)))


def _collection_disabled(driver: Driver, _key: str, _url: str) -> None:
    disabled = CollectionRecord(SUB, RG, COLL, "westeurope", properties={"state": "Disabled"})
    put_collection(driver.store, disabled)


@pytest.mark.parametrize(
    ("change", "disposition", "writes"),
    [
        pytest.param(_deleted, "Dropped", 1, id="deleted"),
        pytest.param(_disabled, "Dropped", 1, id="disabled"),
        pytest.param(_created_again, "Dropped", 1, id="created-again"),
        # The claim fails, the job is read again and claimed: the new action runs.
        pytest.param(_replaced, "Ran", 2, id="replaced"),
        # Not read again (the job did not change): the trade-off of test_execute_confirm.py.
        pytest.param(_collection_disabled, "Ran", 1, id="collection-disabled"),
    ],
)
def test_a_change_during_the_wait_costs_no_write_before_the_claim(
    driver: Driver,
    target: HttpTarget,
    seen: Seen,
    change: Callable[[Driver, str, str], None],
    disposition: str,
    writes: int,
) -> None:
    """Whatever changed during the wait fails the claim at the second (or, for the
    collection, is seen from the next occurrence), and the occurrence is decided again as a
    fresh delivery at that instant; nothing was written before the wait, so nothing is left
    to undo (a disabled job keeps no claim of the occurrence), and the watchdog sent before
    the wait is deleted. `writes`: the job writes from the delivery to the action or the
    drop (two before: the claim before the wait and the write back at the second)."""
    job = make_job(driver.store, http_action(target.url))
    job = put_job(driver.store, replace(job, incarnation="first"), etag=job.etag)
    message = ExecutionMessage.scheduled(job.key, T0, 1, incarnation="first")
    _waiting(driver, lambda: change(driver, job.key, target.url))

    report = _early(driver, message)

    assert report.disposition == disposition
    assert seen.writes == [writes]
    assert driver.queue_length() == 0
    if disposition == "Ran":
        assert [request.path for request in target.requests] == [
            "/new" if change is _replaced else "/"
        ]
        claim = step_claim(driver.job(job.key), message)
        assert claim is not None and claim.done and claim.started >= T0
    else:
        assert target.requests == [] and driver.history(job.history_key) == []
        if change is _disabled:
            assert message.execution_tag not in executor_state(driver.job(job.key)).claims


class _Beats:
    """Stands for the heartbeat's stop event: `beats` intervals pass, then it is stopped,
    so its loop runs on the test's thread, beat by beat, without waiting."""

    def __init__(self, beats: int) -> None:
        self.beats = beats

    def wait(self, _timeout: float) -> bool:
        self.beats -= 1
        return self.beats < 0


def test_the_heartbeat_of_an_attempt_waiting_for_its_claim_renews_only_once_claimed(
    driver: Driver, target: HttpTarget
) -> None:
    """The heartbeat starts with the watchdog, before the wait: a beat before the claim at
    the second finds nothing of this worker's to renew and must not take that for a claim
    lost (the attempt would then not run); once claimed, it renews."""
    job = make_job(driver.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    beat = heartbeat.Heartbeat(driver.store, message, "m1", driver.clock)

    beat._stop = _Beats(2)  # type: ignore[assignment]
    beat._run()
    assert not beat.lost
    assert message.execution_tag not in executor_state(driver.job(job.key)).claims

    record = driver.job(job.key)
    put_job(driver.store, lifecycle.with_claim(record, message, "m1", now=T0), etag=record.etag)
    beat.claimed.set()
    renewed_at = driver.clock.now  # the fake clock's next reading
    beat._stop = _Beats(1)  # type: ignore[assignment]
    beat._run()
    assert not beat.lost
    claim = step_claim(driver.job(job.key), message)
    assert claim is not None and claim.lease_until == renewed_at + lease.LEASE
