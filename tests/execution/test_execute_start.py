"""Exact starts: a scheduled occurrence is delivered 1-2 s early, read and decided, its
watchdog sent, then claimed with one conditional write and started at its second; anything
else runs as soon as it is delivered; a message far too early is deferred.

Real Azurite tables and queue and a real local HTTP server; the waiting goes through the
fake clock's `sleep`, so no test sleeps. Storage requests are counted by the cost
benchmark's hook on the real requests (`storage_calls`), by stage and method.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import pytest

from scheduler_lib import storage_calls
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution import execute
from scheduler_lib.execution.execute import MAX_START_WAIT
from scheduler_lib.execution.lifecycle import executor_state
from tests.execution.harness import T0, Driver, http_action, make_job
from tests.support.http_target import HttpTarget


@pytest.fixture
def waits(driver: Driver) -> list[float]:
    """Every wait the executor asks for, while the clock still moves as it would."""
    asked: list[float] = []
    sleep = driver.clock.sleep

    def recording(seconds: float) -> None:
        asked.append(seconds)
        sleep(seconds)

    driver.clock.sleep = recording  # type: ignore[method-assign]
    return asked


def test_an_occurrence_delivered_early_is_claimed_and_started_at_its_second(
    driver: Driver, target: HttpTarget, waits: list[float]
) -> None:
    """Not claimed before the wait (the claim is the one write before the action, taken at
    the second), but watched: its watchdog is already queued while it waits."""
    job = make_job(driver.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    claimed_before_waiting: list[bool] = []
    watched_while_waiting: list[int] = []
    sleep = driver.clock.sleep

    def check_claim(seconds: float) -> None:
        claims = executor_state(driver.job(job.key)).claims
        claimed_before_waiting.append(message.execution_tag in claims)
        watched_while_waiting.append(driver.queue_length())
        sleep(seconds)

    driver.clock.sleep = check_claim  # type: ignore[method-assign]
    driver.clock.now = T0 - timedelta(seconds=1.6)

    report = driver.run(message)

    assert report.disposition == "Ran"
    assert claimed_before_waiting == [False] and watched_while_waiting == [1]
    assert driver.queue_length() == 0  # the attempt ended: its watchdog deleted
    [waited] = waits
    assert 0 < waited < 1.6
    assert T0 <= report.history.start_time < T0 + timedelta(seconds=1)
    [request] = target.requests
    expected = request.headers["x-ms-scheduler-expected-execution-time"]
    assert expected.startswith("2026-03-04T09:00:00")


def test_a_late_occurrence_starts_at_once(
    driver: Driver, target: HttpTarget, waits: list[float]
) -> None:
    job = make_job(driver.store, http_action(target.url))
    driver.clock.now = T0 + timedelta(seconds=3)

    report = driver.run(ExecutionMessage.scheduled(job.key, T0, 1))

    assert report.disposition == "Ran" and waits == []
    assert report.history.start_time >= T0 + timedelta(seconds=3)


@pytest.mark.parametrize(
    "message",
    [
        pytest.param(lambda key: ExecutionMessage.scheduled(key, T0, 1).next_attempt(), id="retry"),
        pytest.param(
            lambda key: ExecutionMessage.scheduled(key, T0, 1).error_action(), id="error-action"
        ),
        pytest.param(
            lambda key: ExecutionMessage.manual_run(key, now=T0 + timedelta(minutes=1)),
            id="manual-run",
        ),
    ],
)
def test_anything_but_a_scheduled_first_attempt_runs_as_soon_as_it_is_delivered(
    driver: Driver, target: HttpTarget, waits: list[float], message: object
) -> None:
    """Retries follow their failure by retryInterval, a manual run is due when it is sent:
    none of them is delivered early, so none waits, even if its occurrence lies ahead."""
    action = http_action(target.url, errorAction=http_action(target.url))
    job = make_job(driver.store, action)
    driver.clock.now = T0 - timedelta(seconds=30)

    report = driver.run(message(job.key))  # type: ignore[operator]

    assert report.disposition == "Ran" and waits == []
    assert len(target.requests) == 1


def test_a_message_delivered_far_too_early_is_deferred_not_held(
    driver: Driver, target: HttpTarget, waits: list[float]
) -> None:
    """More than MAX_START_WAIT early (a clock far off): no claim, no wait, no request; the
    message is sent again to appear at its time, and that copy runs normally."""
    job = make_job(driver.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    driver.clock.now = T0 - MAX_START_WAIT - timedelta(seconds=10)

    report = driver.run(message)

    assert report.disposition == "Deferred"
    assert waits == [] and target.requests == []
    assert message.execution_tag not in executor_state(driver.job(job.key)).claims
    assert driver.queue_length() == 1  # the copy, hidden until about its second
    assert driver.queued() == []

    driver.clock.now = T0 - timedelta(seconds=1)
    again = driver.run(message)
    assert again.disposition == "Ran" and len(target.requests) == 1


@dataclass
class Requests:
    """The storage requests the executor made (stage and method -> how many): until it
    waits (`before_wait`), and from the end of its wait to the start of its action
    (`at_second`; an attempt that does not wait: everything before its action)."""

    before_wait: Counter[str] = field(default_factory=Counter)
    at_second: Counter[str] = field(default_factory=Counter)


def _since(before: dict[str, int]) -> Counter[str]:
    """The requests of the executor's invocation (`Runtime.execute`) since `before` (not
    the runtime's creation of its tables and queues)."""
    grown = Counter(storage_calls.snapshot())
    grown.subtract(before)
    return Counter({stage: n for stage, n in grown.items() if n and stage.startswith("execute:")})


@pytest.fixture
def requests_made(
    driver: Driver, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[Requests]:
    """Count the executor's storage requests (its runtime's clients are built after this,
    with the benchmark's counting hook; the test's own `driver.store` is not counted)."""
    monkeypatch.setenv(storage_calls.COUNT_CALLS_SETTING, str(tmp_path / "calls.json"))
    made = Requests()
    mark = [storage_calls.snapshot()]
    sleep, run_action = driver.clock.sleep, execute.run_action

    def waiting(seconds: float) -> None:
        made.before_wait = _since(mark[0])
        sleep(seconds)
        mark[0] = storage_calls.snapshot()

    def acting(*args: object, **kwargs: object) -> object:
        made.at_second = _since(mark[0])
        return run_action(*args, **kwargs)  # type: ignore[arg-type]

    driver.clock.sleep = waiting  # type: ignore[method-assign]
    monkeypatch.setattr(execute, "run_action", acting)
    yield made


#: The requests of one read of the job and of its collection, and of a claim (the job's
#: conditional replace), and the watchdog every claimed attempt sends (`heartbeat`).
READ_JOB = "execute: store.jobs [table GET]"
READ_COLLECTION = "execute: store.collections [table GET]"
CLAIM = "execute: store.jobs [table PUT]"
WATCHDOG = "execute: store.kept_message [queue POST]"


def test_at_its_second_one_conditional_write_is_the_one_request_before_the_action(
    driver: Driver, target: HttpTarget, requests_made: Requests
) -> None:
    """Whatever the executor does between the occurrence's second and its action is lateness
    and cost. Before the wait: the job and its collection read once and its watchdog sent;
    after it, one request: the claim, conditional on the ETag read before the wait (the job
    unchanged since), and the collection read then supplies the signing secrets (two reads
    were made here once, then the claim before the wait and a write back at the second)."""
    job = make_job(driver.store, http_action(target.url))
    driver.clock.now = T0 - timedelta(seconds=1.6)

    report = driver.run(ExecutionMessage.scheduled(job.key, T0, 1))

    assert report.disposition == "Ran" and len(target.requests) == 1
    assert requests_made.before_wait == Counter({READ_JOB: 1, READ_COLLECTION: 1, WATCHDOG: 1})
    assert requests_made.at_second == Counter({CLAIM: 1})
    claim = executor_state(driver.job(job.key)).claims[
        ExecutionMessage.scheduled(job.key, T0, 1).execution_tag
    ]
    assert claim.done


@pytest.mark.parametrize("kind", ["manual run", "occurrence delivered after its second"])
def test_an_attempt_that_does_not_wait_reads_then_claims_before_its_action(
    driver: Driver, target: HttpTarget, requests_made: Requests, kind: str
) -> None:
    """An attempt run as soon as it is delivered (a manual run, a retry, an occurrence
    delivered at or after its second) reads the job and its collection, claims, and runs:
    its signing secrets come from the collection its claim read, not from a second read."""
    job = make_job(driver.store, http_action(target.url))
    message = (
        ExecutionMessage.manual_run(job.key, now=T0)
        if kind == "manual run"
        else ExecutionMessage.scheduled(job.key, T0 - timedelta(seconds=1), 1)
    )

    report = driver.run(message)

    assert report.disposition == "Ran" and len(target.requests) == 1
    assert requests_made.before_wait == Counter()  # it never waited
    assert requests_made.at_second == Counter(
        {READ_JOB: 1, READ_COLLECTION: 1, CLAIM: 1, WATCHDOG: 1}
    )
