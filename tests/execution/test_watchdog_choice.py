"""`SCHEDULER_WATCHDOG=heartbeat`: the watchdog is sent with the heartbeat's first renewal,
only by an attempt still running then, and deleted at its end only if it was sent; one
whose worker dies before that beat is left to the host's redelivery of its message.

Real Azurite tables and queue, a real local HTTP server, an injected clock. The beat's
interval is real time (a thread), so each test sets it (`Executor.beat`) either far beyond
the attempt (60 s: the attempt ends first) or short, with a target that answers only once
the watchdog is in the queue: the attempt outlives its first beat whatever the machine's
load, and no test waits for a schedule. Queue operations are counted by the cost
benchmark's hook on the real requests (`storage_calls`), by stage; the watchdog's are those
of `store.kept_message` (from the invocation, `execute:`, or from the beat's own thread,
which also keeps it hidden at each later beat: `KEPT`)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from devtools.devhost import VISIBILITY_TIMEOUT
from scheduler_lib import storage_calls
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution import lease
from scheduler_lib.watchdog_choice import WatchdogChoice
from tests.execution.harness import T0, Driver, http_action, make_job
from tests.execution.test_execute_dedupe import WorkerKilled
from tests.execution.test_lease import PAST_LEASE, DyingSender, claim_of, service_bus_job
from tests.support.http_target import HttpTarget

#: The watchdog's queue operations, by who made them: the invocation, or the beat's thread.
SENT_AT_CLAIM = "execute: store.kept_message [queue POST]"
SENT_AT_BEAT = "execution.heartbeat: store.kept_message [queue POST]"
DISCARDED = "execute: store.kept_message [queue DELETE]"
KEPT = "execution.heartbeat: store.kept_message [queue PUT]"


def beating(driver: Driver, choice: WatchdogChoice, beat: float) -> Driver:
    """`driver` with the deployment's watchdog `choice` and a beat every `beat` seconds."""
    driver.settings = replace(driver.settings, watchdog=choice)
    driver.runtime.executor = replace(driver.runtime.executor, beat=beat)
    return driver


@pytest.fixture
def watchdog_calls(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[[], Counter[str]]:
    """The watchdog's queue requests since the fixture (the runtime's clients must be built
    after it, so that they count)."""
    monkeypatch.setenv(storage_calls.COUNT_CALLS_SETTING, str(tmp_path / "calls.json"))
    before = Counter(storage_calls.snapshot())

    def since() -> Counter[str]:
        grown = Counter(storage_calls.snapshot())
        grown.subtract(before)
        return Counter({k: n for k, n in grown.items() if n and "store.kept_message [queue" in k})

    return since


def until_watchdog_queued(driver: Driver, timeout: float = 30.0) -> None:
    """Block (the target's or the sender's thread, inside the action) until the attempt's
    watchdog is in the queue: the action outlives the first beat."""
    deadline = time.monotonic() + timeout
    while driver.queue_length() == 0:
        assert time.monotonic() < deadline, "no watchdog sent by the heartbeat"
        time.sleep(0.02)


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        (WatchdogChoice.CLAIM, {SENT_AT_CLAIM: 1, DISCARDED: 1}),
        (WatchdogChoice.HEARTBEAT, {}),
    ],
)
def test_an_attempt_that_ends_before_its_first_beat_sends_a_watchdog_only_with_claim(
    driver: Driver,
    target: HttpTarget,
    watchdog_calls: Callable[[], Counter[str]],
    choice: WatchdogChoice,
    expected: dict[str, int],
) -> None:
    """An occurrence delivered early, its wait and its action over before the first beat:
    two queue operations with `claim` (as before the setting), none with `heartbeat`."""
    beating(driver, choice, beat=60)
    job = make_job(driver.store, http_action(target.url))
    driver.clock.now = T0 - timedelta(seconds=1.6)

    report = driver.run(ExecutionMessage.scheduled(job.key, T0, 1))

    assert report.disposition == "Ran" and len(target.requests) == 1
    assert watchdog_calls() == Counter(expected)
    assert driver.queue_length() == 0


def test_an_attempt_still_running_at_its_first_beat_sends_its_watchdog_then_discards_it(
    driver: Driver, target: HttpTarget, watchdog_calls: Callable[[], Counter[str]]
) -> None:
    beating(driver, WatchdogChoice.HEARTBEAT, beat=0.05)
    job = make_job(driver.store, http_action(target.url))

    def answer_after_the_beat(_request: object) -> str:
        until_watchdog_queued(driver)
        return "done"

    target.reply(200, answer_after_the_beat)
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    driver.clock.now = T0 - timedelta(seconds=1.6)

    report = driver.run(message)

    assert report.disposition == "Ran" and len(target.requests) == 1
    calls = watchdog_calls()
    del calls[KEPT]  # as many as beats came after the send: the target answers on its own time
    assert calls == Counter({SENT_AT_BEAT: 1, DISCARDED: 1})  # sent once only
    assert driver.queue_length() == 0
    assert claim_of(driver, message).done


def test_a_worker_that_dies_after_its_first_beat_is_taken_over_by_its_watchdog(
    driver: Driver, watchdog_calls: Callable[[], Counter[str]]
) -> None:
    beating(driver, WatchdogChoice.HEARTBEAT, beat=0.05)
    sender = DyingSender()
    job = service_bus_job(driver, sender)
    send = sender.send_messages

    def dying_after_the_beat(message: object, timeout: float | None = None) -> None:
        until_watchdog_queued(driver)
        send(message, timeout)

    sender.send_messages = dying_after_the_beat  # type: ignore[method-assign]
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    with pytest.raises(WorkerKilled):
        driver.run(message, message_id="m1")
    assert driver.queue_length() == 1  # its watchdog, left in the queue
    assert watchdog_calls() == Counter({SENT_AT_BEAT: 1})  # by the beat, not at the claim
    seen = claim_of(driver, message).lease_until
    assert seen is not None

    driver.clock.advance(PAST_LEASE)
    assert driver.run(message.watching(), message_id="w1").disposition == "Watching"
    driver.clock.advance(lease.CONFIRM)
    took = driver.run(message.watching(lease_seen=seen.isoformat()), message_id="w2")

    assert took.disposition == "Rerun" and len(sender.sent) == 1
    [entry] = driver.history(job.key)
    assert entry.status == "Completed" and entry.message.startswith("[Rerun] ")
    assert driver.run(message, message_id="m1", dequeue_count=2).disposition == "Duplicate"


def test_a_worker_that_dies_before_its_first_beat_is_run_again_by_redelivery(
    driver: Driver,
) -> None:
    """No watchdog was sent: the attempt's own message comes back once the host's
    visibility timeout (10 minutes) runs out, finds its claim still open under its own id
    and runs it again, as a Rerun ~10 minutes late: lateness is judged at the first claim,
    so not Postponed even though the grace period (5 minutes) is shorter."""
    beating(driver, WatchdogChoice.HEARTBEAT, beat=60)
    sender = DyingSender()
    job = service_bus_job(driver, sender)
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    driver.clock.now = T0 - timedelta(seconds=1.6)
    with pytest.raises(WorkerKilled):
        driver.run(message, message_id="m1")
    assert driver.queue_length() == 0  # nothing watches it
    assert driver.settings.grace_period < timedelta(seconds=VISIBILITY_TIMEOUT)

    driver.clock.advance(timedelta(seconds=VISIBILITY_TIMEOUT))
    again = driver.run(message, message_id="m1", dequeue_count=2)

    assert (again.disposition, again.reason) == ("Rerun", "Rerun: dequeue 2")
    assert len(sender.sent) == 1
    [entry] = driver.history(job.key)
    assert entry.status == "Completed" and entry.message.startswith("[Rerun] ")
    assert entry.start_time >= T0 + timedelta(seconds=VISIBILITY_TIMEOUT - 2)
    assert (entry.expected_execution_time, entry.retry_count) == (T0, 0)
    assert claim_of(driver, message).done


def test_with_heartbeat_a_worker_that_dies_in_an_early_wait_is_postponed_by_redelivery(
    driver: Driver, target: HttpTarget
) -> None:
    """An early occurrence is claimed only at its second, and with `heartbeat` nothing is
    sent before it: a worker that dies in the wait leaves neither a claim nor a watchdog.
    The message the host gives back 10 minutes later is a delivery later than the grace
    period (5 minutes): Postponed, the action not run (what docs/deploy.md says this choice
    costs; with `claim` the watchdog sent before the wait runs it ~11 s late)."""

    def die(_seconds: float) -> None:
        raise WorkerKilled

    driver.clock.sleep = die  # type: ignore[method-assign]  # before the runtime takes it
    beating(driver, WatchdogChoice.HEARTBEAT, beat=60)
    job = make_job(driver.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    driver.clock.now = T0 - timedelta(seconds=1.5)
    with pytest.raises(WorkerKilled):
        driver.run(message, message_id="m1")
    assert driver.queue_length() == 0  # nothing watches the wait

    driver.clock.now = T0 + timedelta(seconds=VISIBILITY_TIMEOUT)
    again = driver.run(message, message_id="m1", dequeue_count=2)

    assert again.disposition == "Postponed" and target.requests == []
