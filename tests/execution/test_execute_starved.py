"""A worker starved past its occurrence's second between deciding to wait for it and
watching the attempt (300 batch members at once on two loaded cores: threads held off the
GIL for seconds) must still run the occurrence once.

What lost 5-8 of 300 occurrences due at one second (docs/cost.md, "Batch messages: the
executor"): the heartbeat was told the attempt was claimed because the clock had passed the
second, although its claim was still to be written. Its first renewal, before that write,
found no claim, took the attempt for taken over; the claim was then written, the attempt
dropped as a Duplicate, and its watchdog deleted with it (sent as if after a claim, not
`before_claim`): nobody ran the occurrence, its claim left unfinished. Nothing about batches
in it: a lone early delivery starved the same way lost its occurrence too.

Real Azurite tables and queue and a real local HTTP server. Deterministic: the starvation
is the fake clock moved past the second right after the decision to wait (a wrapper of
`claims.claim`), and the heartbeat's loop runs one beat on the test's thread "during the
wait" (the executor's `sleep`), as the beat of a thread that ran meanwhile would."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta

import pytest

from scheduler_lib.domain.executor_state import step_claim
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution import claims, decide, heartbeat
from scheduler_lib.store.execution_queue import ExecutionQueue
from tests.execution.harness import T0, Driver, http_action, make_job
from tests.support.http_target import HttpTarget

#: How long the starved thread is held off between its decision and its watch.
STARVED = timedelta(seconds=2)


class _OneBeat:
    """Stands for the heartbeat's stop event while one beat runs on the test's thread."""

    def __init__(self) -> None:
        self.beats = 1

    def wait(self, _timeout: float) -> bool:
        self.beats -= 1
        return self.beats < 0


@pytest.fixture
def starved(driver: Driver, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The executor starved past the second after deciding to wait, with a heartbeat beat
    in its wait; yields the bodies it sent to the execution queue."""
    beats: dict[int, heartbeat.Heartbeat] = {}  # by the thread of its attempt
    sent: list[str] = []
    claim, send_body = claims.claim, ExecutionQueue.send_body

    def starving_claim(*args: object, **kwargs: object) -> object:
        claimed = claim(*args, **kwargs)  # type: ignore[arg-type]  # passed through as given
        if isinstance(claimed, claims.Claimed) and isinstance(claimed.next, decide.Wait):
            driver.clock.advance(STARVED)  # decided to wait; the second passes meanwhile
        return claimed

    def start(self: heartbeat.Heartbeat) -> None:  # its loop is run by `beat_in_wait`
        beats[threading.get_ident()] = self
        self._thread = threading.Thread(target=lambda: None)
        self._thread.start()

    def sending(self: ExecutionQueue, body: str, **kwargs: int) -> object:
        sent.append(body)
        return send_body(self, body, **kwargs)

    sleep = driver.clock.sleep

    def beat_in_wait(seconds: float) -> None:
        beat = beats[threading.get_ident()]
        stop, beat._stop = beat._stop, _OneBeat()  # type: ignore[assignment]  # one beat
        beat._run()
        beat._stop = stop
        sleep(seconds)

    monkeypatch.setattr(claims, "claim", starving_claim)
    monkeypatch.setattr(heartbeat.Heartbeat, "start", start)
    monkeypatch.setattr(ExecutionQueue, "send_body", sending)
    driver.clock.sleep = beat_in_wait  # type: ignore[method-assign]
    yield sent


def _watchdogs(sent: list[str]) -> list[ExecutionMessage]:
    return [m for m in map(ExecutionMessage.from_json, sent) if m.watchdog]


def test_a_worker_starved_past_its_second_still_runs_its_occurrence(
    driver: Driver, target: HttpTarget, starved: list[str]
) -> None:
    """The beat in the wait renews nothing (nothing is claimed yet), the claim is written
    at the (late) second, the action runs once and the claim is done; the watchdog sent
    before the claim says so (`before_claim`: one that finds no claim runs the attempt)."""
    job = make_job(driver.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    driver.clock.now = T0 - timedelta(seconds=1.5)

    report = driver.run(message, message_id="m1")

    assert (report.disposition, len(target.requests)) == ("Ran", 1)
    claim = step_claim(driver.job(job.key), message)
    assert claim is not None and claim.done and claim.message_id == "m1"
    [watchdog] = _watchdogs(starved)
    assert watchdog.before_claim


def test_a_batch_starved_past_its_second_runs_every_member(
    driver: Driver, target: HttpTarget, starved: list[str]
) -> None:
    """The same in a batch (what the benchmark ran): each member runs once."""
    jobs = [make_job(driver.store, http_action(target.url), name=f"Job-{i}") for i in range(4)]
    messages = [ExecutionMessage.scheduled(job.key, T0, 1) for job in jobs]
    driver.clock.now = T0 - timedelta(seconds=1.5)

    reports = driver.run_batch(messages, message_id="b1")

    assert [r.disposition for r in reports] == ["Ran"] * 4
    assert len(target.requests) == 4
    for job, message in zip(jobs, messages, strict=True):
        claim = step_claim(driver.job(job.key), message)
        assert claim is not None and claim.done
