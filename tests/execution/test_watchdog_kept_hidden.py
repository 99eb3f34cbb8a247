"""A watchdog is kept hidden while its worker beats (`heartbeat`, `store.kept_message`):
each beat pushes it past the lease it just renewed (or, in an early delivery's wait, past
the lease of a claim at the second), so it is delivered only once its worker stopped. A
batch's one watchdog has a beat of its own while its members run. At the end it is deleted
under the pop receipt of its last update; one a look took meanwhile is left to the look.

Why: a watchdog delivered while its worker lived was looked at by any instance and sent
again, one link a lease; an instance that died holding a link hid it for the queue
trigger's 10 minutes, so a worker dying with it was not taken over within seconds (a
fresh-clone CI run of `tests/devtools/test_devhost_kill.py` saw 2 of 12 not run again).

Real Azurite tables and queue, a real local HTTP server, the worker's composition root.
The beat is real time on a thread of its own (`Executor.beat`, shortened here), so a test
whose action must outlive a beat has its target answer only once that beat was seen; the
queue's own `postpone` is wrapped to record each update's delay, the update itself real.
A beat's loop is also run on the test's thread, beat by beat (`_Beats`), where the test
needs the clock at each beat. Assertions run once the invocation returned."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta

import pytest

from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution import heartbeat, lease, lifecycle
from scheduler_lib.store.execution_queue import ExecutionQueue, SentMessage
from scheduler_lib.store.jobs import put_job
from tests.execution.harness import T0, Driver, http_action, make_job
from tests.execution.test_execute_claim_at_second import _Beats
from tests.support.http_target import HttpTarget

#: The delay of an update at a beat after a renewal: the lease from now, and the margin.
PAST_LEASE = int((lease.LEASE + lease.MARGIN).total_seconds())


class Updates:
    """Every `postpone` the worker made (the delays asked for), through the real queue."""

    def __init__(self) -> None:
        self.delays: list[int] = []
        self._seen = threading.Condition()

    def wrap(self, monkeypatch: pytest.MonkeyPatch) -> None:
        postpone = ExecutionQueue.postpone

        def recording(
            queue: ExecutionQueue, sent: SentMessage, *, delay_seconds: int
        ) -> SentMessage | None:
            kept = postpone(queue, sent, delay_seconds=delay_seconds)
            with self._seen:
                self.delays.append(delay_seconds)
                self._seen.notify_all()
            return kept

        monkeypatch.setattr(ExecutionQueue, "postpone", recording)

    def after(self, count: int) -> Callable[[object], str]:
        """A target's answer given only once `count` updates were made."""

        def answer(_request: object) -> str:
            with self._seen:
                assert self._seen.wait_for(lambda: len(self.delays) >= count, timeout=30)
            return "done"

        return answer


@pytest.fixture
def updates(monkeypatch: pytest.MonkeyPatch) -> Updates:
    made = Updates()
    made.wrap(monkeypatch)
    return made


def _beating(driver: Driver, beat: float) -> Driver:
    driver.runtime.executor = replace(driver.runtime.executor, beat=beat)
    return driver


def test_a_running_attempt_keeps_its_watchdog_hidden_past_each_renewed_lease(
    driver: Driver, target: HttpTarget, updates: Updates
) -> None:
    _beating(driver, 0.05)
    job = make_job(driver.store, http_action(target.url))
    target.reply(200, updates.after(3))
    driver.clock.now = T0 + timedelta(seconds=0.5)

    report = driver.run(ExecutionMessage.scheduled(job.key, T0, 1))

    assert report.disposition == "Ran" and len(target.requests) == 1
    assert len(updates.delays) >= 3 and set(updates.delays) == {PAST_LEASE}
    assert driver.queue_length() == 0  # deleted under the receipt of its last update


def test_a_batch_keeps_its_one_watchdog_hidden_while_its_members_run(
    driver: Driver, target: HttpTarget, updates: Updates
) -> None:
    """One beat for the whole batch: the members' own heartbeats renew their leases only
    (they send and keep no watchdog of their own); the beat stops with the members."""
    _beating(driver, 0.05)
    jobs = [make_job(driver.store, http_action(target.url), name=f"Job-{i}") for i in range(4)]
    messages = [ExecutionMessage.scheduled(job.key, T0, 1) for job in jobs]
    target.reply(200, updates.after(3))
    driver.clock.now = T0 + timedelta(seconds=0.5)

    reports = driver.run_batch(messages, message_id="b1")

    assert [r.disposition for r in reports] == ["Ran"] * 4 and len(target.requests) == 4
    assert len(updates.delays) >= 3
    assert driver.queue_length() == 0  # the batch's watchdog, deleted at the end
    assert not [t for t in threading.enumerate() if t.name == "batch-watchdog"]  # joined


def _sent_watchdog(driver: Driver, message: ExecutionMessage, **send: object) -> heartbeat.Watchdog:
    dog = heartbeat.Watchdog(driver.queue, message, driver.clock)
    dog.send(**send)  # type: ignore[arg-type]  # claim_at, or nothing
    return dog


def test_in_the_wait_its_watchdog_is_kept_past_the_lease_of_a_claim_at_the_second(
    driver: Driver, updates: Updates
) -> None:
    """Delivered early and not claimed yet: a beat keeps the watchdog hidden past the
    lease of the claim the worker will write at its second (however late the beat comes
    in the wait), then, claimed, past the lease it renewed."""
    job = make_job(driver.store, http_action("http://127.0.0.1:9/"))
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    driver.clock.tick = timedelta(0)
    driver.clock.now = T0 - timedelta(seconds=1.5)
    dog = _sent_watchdog(driver, message, claim_at=T0)
    beat = heartbeat.Heartbeat(driver.store, message, "m1", driver.clock, watchdog=dog,
                               claim_at=T0)  # fmt: skip

    driver.clock.now = T0 - timedelta(seconds=0.5)
    beat._stop = _Beats(1)  # type: ignore[assignment]  # one beat on this thread
    beat._run()
    assert updates.delays == [PAST_LEASE + 1]  # 10.5 s + 1 s to the second, rounded up

    record = driver.job(job.key)
    put_job(driver.store, lifecycle.with_claim(record, message, "m1", now=T0), etag=record.etag)
    beat.claimed.set()
    driver.clock.now = T0 + timedelta(seconds=3)
    beat._stop = _Beats(1)  # type: ignore[assignment]
    beat._run()
    assert updates.delays[1:] == [PAST_LEASE] and not beat.lost
    dog.discard()
    assert driver.queue_length() == 0


def test_a_watchdog_taken_while_its_worker_lives_is_left_to_the_look(
    driver: Driver, updates: Updates
) -> None:
    """A beat that did not get through in time let the watchdog become visible, and a look
    took it: the worker's next beat renews its lease as before, leaves the message to the
    look (no error, no further update), and does not delete it at the end."""
    job = make_job(driver.store, http_action("http://127.0.0.1:9/"))
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    record = driver.job(job.key)
    put_job(driver.store, lifecycle.with_claim(record, message, "m1", now=T0), etag=record.etag)
    dog = _sent_watchdog(driver, message)
    assert dog.sent is not None
    driver.queue.client.update_message(dog.sent.id, dog.sent.pop_receipt, visibility_timeout=0)
    [looked] = driver.queue.receive(max_messages=1, visibility_timeout=60)
    beat = heartbeat.Heartbeat(driver.store, message, "m1", driver.clock, watchdog=dog)
    beat.claimed.set()

    beat._stop = _Beats(2)  # type: ignore[assignment]
    beat._run()
    dog.discard()

    assert dog.taken and not beat.lost and len(updates.delays) == 1
    assert driver.queue.depth() == 1  # the look's, still
    driver.queue.delete(looked)
