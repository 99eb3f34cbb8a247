"""One watchdog message per batch (issue 22): a batch's members share one watchdog message,
a batch of each member's watching message (`before_claim`), sent once before the members
start and deleted once all of them ended normally (`batch_watchdog.BatchWatchdog`), instead of a
send and a delete per member. Delivered, each of its members is looked at as a lone
watchdog would be, under its member id.

Real Azurite tables and queue and a real local HTTP server, through the worker's real
composition root (`Runtime.execute_queued`). Queue operations are counted by the cost
benchmark's hook on the real requests (`storage_calls`). The watchdog is invisible for real
seconds: the bodies the executor sends are recorded and handed back to it as the queue
trigger would, with the clock moved past their visibility (no test sleeps). A member whose
worker "dies" raises `Died` where the process would stop: the other members end (as they
had before the death), the batch's watchdog stays, and no member's heartbeat renews after
it (the same state a dead worker leaves). Every assertion runs once the invocation returned
or raised, i.e. once every member's thread ended.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from scheduler_lib import storage_calls
from scheduler_lib.domain.executor_state import step_claim
from scheduler_lib.domain.messages import ExecutionMessage, parse_body
from scheduler_lib.execution import execute, lease
from scheduler_lib.execution.heartbeat import renew
from scheduler_lib.store.execution_queue import ExecutionQueue
from scheduler_lib.store.jobs import delete_job
from scheduler_lib.watchdog_choice import WatchdogChoice
from tests.execution.harness import T0, Driver, http_action, make_job
from tests.support.http_target import HttpTarget
from tests.support.storage_counts import methods_since

PAST_LEASE = lease.LEASE + lease.MARGIN


class Died(Exception):
    """Stands for the worker dying at that point (see the module)."""


@dataclass(frozen=True)
class Sent:
    """One body the executor sent to the execution queue, and when it becomes visible."""

    body: str
    visible_at: datetime

    @property
    def members(self) -> list[ExecutionMessage]:
        return parse_body(self.body)

    @property
    def is_batch(self) -> bool:
        return '"batch":' in self.body


@dataclass
class Seen:
    """The bodies the executor sent (in order) and the queue requests it made."""

    sent: list[Sent] = field(default_factory=list)
    since: dict[str, int] = field(default_factory=dict)

    def watchdogs(self) -> list[Sent]:
        return [s for s in self.sent if all(m.watchdog for m in s.members)]

    def mark(self) -> None:
        self.sent.clear()
        self.since = storage_calls.snapshot()

    def queue_requests(self) -> Counter[str]:
        """Queue requests since `mark`, by method (POST: a send, DELETE: a delete)."""
        return methods_since(self.since, "[queue ")


@pytest.fixture
def seen(driver: Driver, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Seen:
    """Record what the executor sends and count its queue requests (its runtime's clients
    are built after this, with the benchmark's counting hook)."""
    monkeypatch.setenv(storage_calls.COUNT_CALLS_SETTING, str(tmp_path / "calls.json"))
    made = Seen()
    send_body = ExecutionQueue.send_body

    def sending(self: ExecutionQueue, body: str, **kwargs: int) -> object:
        delay = kwargs.get("delay_seconds", 0)
        made.sent.append(Sent(body, driver.clock.now + timedelta(seconds=delay)))
        return send_body(self, body, **kwargs)

    monkeypatch.setattr(ExecutionQueue, "send_body", sending)
    driver.clock.tick = timedelta(milliseconds=1)  # members read it from several threads
    return made


def _batch(driver: Driver, url: str, count: int) -> list[ExecutionMessage]:
    jobs = [make_job(driver.store, http_action(url), name=f"Job-{i}") for i in range(count)]
    return [ExecutionMessage.scheduled(job.key, T0, 1, job.incarnation) for job in jobs]


def _dying(monkeypatch: pytest.MonkeyPatch, tags: set[str]) -> set[str]:
    """The members whose tags are in the set returned die inside their action call
    (claimed, not finished); empty it and no one dies any more."""
    run_action = execute.run_action

    def run(action: Any, context: Any, *args: Any, **kwargs: Any) -> Any:
        if context.execution_tag in tags:
            raise Died
        return run_action(action, context, *args, **kwargs)

    monkeypatch.setattr(execute, "run_action", run)
    return tags


def _claim(driver: Driver, message: ExecutionMessage) -> Any:
    claim = step_claim(driver.job(message.job_key), message)
    assert claim is not None
    return claim


@pytest.mark.parametrize("early", [False, True], ids=["on-time", "early"])
def test_a_batch_sends_one_watchdog_and_deletes_it_once_every_member_ended(
    driver: Driver, target: HttpTarget, seen: Seen, early: bool
) -> None:
    """Four members: one send and one delete for the watchdog (eight before), a batch of
    each member's watching message, visible when a lone member's would be; the queue is
    empty afterwards (the dispatcher's message is the test's)."""
    messages = _batch(driver, target.url, 4)
    driver.clock.now = T0 - timedelta(seconds=1.5) if early else T0 + timedelta(seconds=0.5)
    sent_at = driver.clock.now
    driver.runtime.ensure_storage()  # its queues created before the count
    seen.mark()

    reports = driver.run_batch(messages, message_id="b1")

    assert [r.disposition for r in reports] == ["Ran"] * 4
    assert seen.queue_requests() == {"POST": 1, "DELETE": 1}
    [dog] = seen.watchdogs()
    assert dog.is_batch
    assert dog.members == [m.watching(before_claim=True) for m in messages]
    claimed_at = T0 if early else sent_at  # the second it waits for, or the delivery
    due = claimed_at + PAST_LEASE
    assert due <= dog.visible_at < due + timedelta(seconds=1)
    assert driver.queue_length() == 0


def test_with_the_heartbeat_choice_each_member_sends_its_own_as_before(
    driver: Driver, target: HttpTarget, seen: Seen
) -> None:
    """`SCHEDULER_WATCHDOG=heartbeat`: no watchdog at the start, none for members that end
    before their first beat (the batch's is not sent either)."""
    driver.settings = replace(driver.settings, watchdog=WatchdogChoice.HEARTBEAT)
    messages = _batch(driver, target.url, 3)
    driver.clock.now = T0 + timedelta(seconds=0.5)
    driver.runtime.ensure_storage()  # its queues created before the count
    seen.mark()

    reports = driver.run_batch(messages, message_id="b1")

    assert [r.disposition for r in reports] == ["Ran"] * 3
    assert seen.queue_requests() == {} and seen.watchdogs() == []


def test_a_batch_whose_worker_died_mid_batch_is_taken_over_member_by_member(
    driver: Driver, target: HttpTarget, seen: Seen, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Members 1 and 3 died inside their action, 0 and 2 had finished. The batch's
    watchdog, delivered after the lease, sees each unfinished member's lease expired and
    comes back for it alone after the confirmation (as a lone watchdog does); then each is
    taken over and run once, under its own takeover id; 0 and 2 are not run again. The
    batch itself, redelivered minutes later, is all Duplicates."""
    messages = _batch(driver, target.url, 4)
    dead = {messages[1].job_key, messages[3].job_key}
    dying = _dying(monkeypatch, {messages[1].execution_tag, messages[3].execution_tag})
    driver.clock.now = T0 + timedelta(seconds=0.5)
    with pytest.raises(ExceptionGroup):
        driver.run_batch(messages, message_id="b1")
    dying.clear()  # the worker is gone: the next ones run normally
    assert len(target.requests) == 2
    [dog] = seen.watchdogs()
    assert driver.queue_length() == 1  # the batch's watchdog, left in the queue
    seen.sent.clear()

    driver.clock.advance(PAST_LEASE)
    looked = driver.runtime.execute_queued(dog.body, message_id="w1", dequeue_count=1)

    assert [r.disposition for r in looked] == ["Watched", "Watching"] * 2
    assert "taken over unless renewed" in looked[1].reason and len(target.requests) == 2
    # the members look on threads of their own, so their watchdogs leave in either order
    again = sorted(seen.watchdogs(), key=lambda s: s.members[0].job_key)
    assert [s.members for s in again] == [
        [messages[i].watching(lease_seen=_claim(driver, messages[i]).lease_until.isoformat())]
        for i in (1, 3)
    ]  # one lone watchdog for each unfinished member
    driver.clock.advance(lease.CONFIRM)
    took = [driver.execute(s.body, message_id=f"w2-{i}") for i, s in enumerate(again)]

    assert [r.disposition for r in took] == ["Rerun", "Rerun"]
    assert len(target.requests) == 4
    for index, message in enumerate(messages):
        [entry] = driver.history(message.job_key)
        claim = _claim(driver, message)
        assert claim.done
        if message.job_key in dead:
            assert entry.message.startswith("[Rerun] ") and claim.message_id.startswith("w2-")
        else:
            assert claim.message_id == f"b1#{index}"
    original = driver.run_batch(messages, message_id="b1", dequeue_count=2)
    assert [r.disposition for r in original] == ["Duplicate"] * 4
    assert len(target.requests) == 4


def test_a_batch_whose_worker_died_before_its_second_is_run_by_its_watchdog(
    driver: Driver, target: HttpTarget, seen: Seen
) -> None:
    """Delivered early, every member died in its wait: nothing was claimed. The batch's
    watchdog, visible just after the second's lease, finds each member never claimed and
    runs it at once as a delivery of its own, under its member id; the original batch,
    given back later, is all Duplicates."""
    messages = _batch(driver, target.url, 3)

    def die(_seconds: float) -> None:
        raise Died

    driver.clock.sleep = die  # type: ignore[method-assign]
    driver.clock.now = T0 - timedelta(seconds=1.5)
    with pytest.raises(ExceptionGroup):
        driver.run_batch(messages, message_id="b1")
    assert all(step_claim(driver.job(m.job_key), m) is None for m in messages)
    [dog] = seen.watchdogs()
    assert driver.queue_length() == 1

    driver.clock.now = dog.visible_at
    took = driver.runtime.execute_queued(dog.body, message_id="w1", dequeue_count=1)

    assert [r.disposition for r in took] == ["Ran"] * 3
    assert len(target.requests) == 3
    for index, message in enumerate(messages):
        [entry] = driver.history(message.job_key)
        assert entry.status == "Completed" and not entry.message.startswith("[Rerun]")
        claim = _claim(driver, message)
        assert (claim.message_id, claim.done) == (f"w1#{index}", True)
    original = driver.run_batch(messages, message_id="b1", dequeue_count=2)
    assert [r.disposition for r in original] == ["Duplicate"] * 3
    assert len(target.requests) == 3


def test_a_member_still_running_when_the_batch_watchdog_comes_is_left_and_watched(
    driver: Driver, target: HttpTarget, seen: Seen, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Member 0's action outlives the watchdog's visibility, its heartbeat renewing (done
    here in the action, as the beat does); the batch's watchdog delivered then leaves it
    and sends a lone watchdog of member 0 only, visible after the renewed lease. Member 1
    (its job deleted: dropped at once) is looked at as over. Member 0 runs once; the lone
    watchdog, delivered after, finds it over."""
    messages = _batch(driver, target.url, 2)
    delete_job(driver.store, driver.job(messages[1].job_key))
    run_action = execute.run_action
    looked: list[Any] = []

    def slow(action: Any, context: Any, *args: Any, **kwargs: Any) -> Any:
        driver.clock.advance(PAST_LEASE)  # the action is slow
        assert renew(driver.store, messages[0], "b1#0", driver.clock)  # its heartbeat
        dog = next(s for s in seen.watchdogs() if s.is_batch)
        looked.extend(driver.runtime.execute_queued(dog.body, message_id="w1", dequeue_count=1))
        return run_action(action, context, *args, **kwargs)

    monkeypatch.setattr(execute, "run_action", slow)
    driver.clock.now = T0 + timedelta(seconds=0.5)

    reports = driver.run_batch(messages, message_id="b1")

    assert [r.disposition for r in reports] == ["Ran", "Dropped"]
    assert [(r.disposition, r.reason.split(" until")[0]) for r in looked] == [
        ("Watching", "its worker holds it"), ("Watched", "the job no longer exists"),
    ]  # fmt: skip
    assert len(target.requests) == 1
    lone = [s for s in seen.watchdogs() if not s.is_batch]
    assert [s.members for s in lone] == [[messages[0].watching()]]
    claim = _claim(driver, messages[0])
    assert claim.done and claim.message_id == "b1#0"

    driver.clock.now = lone[0].visible_at
    late = driver.execute(lone[0].body, message_id="w2")

    assert (late.disposition, late.reason) == ("Watched", "the attempt is over")
    assert len(target.requests) == 1


def test_a_member_sent_again_for_later_is_not_watched_by_the_batch(
    driver: Driver, target: HttpTarget, seen: Seen
) -> None:
    """A member due far later than its batch (a clock far off) is Deferred, never claimed
    by this invocation: the batch's watchdog watches only the other, as a lone attempt
    deferred sends none."""
    later, now = _batch(driver, target.url, 2)
    later = replace(later, occurrence=T0 + timedelta(minutes=1))
    driver.clock.now = T0 + timedelta(seconds=0.5)

    reports = driver.run_batch([later, now], message_id="b1")

    assert [r.disposition for r in reports] == ["Deferred", "Ran"]
    [dog] = seen.watchdogs()
    assert dog.members == [now.watching(before_claim=True)]
    assert driver.queue_length() == 1  # the deferred member, sent again
