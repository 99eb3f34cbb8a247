"""Exact starts: a scheduled occurrence is delivered 1-2 s early, claimed, then started at its
second; anything else runs as soon as it is delivered; a message far too early is deferred.

Real Azurite tables and queue and a real local HTTP server; the waiting goes through the
fake clock's `sleep`, so no test sleeps.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution import claims, execute
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


def test_an_occurrence_delivered_early_is_claimed_then_started_at_its_second(
    driver: Driver, target: HttpTarget, waits: list[float]
) -> None:
    job = make_job(driver.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    claimed_before_waiting: list[bool] = []
    sleep = driver.clock.sleep

    def check_claim(seconds: float) -> None:
        claims = executor_state(driver.job(job.key)).claims
        claimed_before_waiting.append(message.execution_tag in claims)
        sleep(seconds)

    driver.clock.sleep = check_claim  # type: ignore[method-assign]
    driver.clock.now = T0 - timedelta(seconds=1.6)

    report = driver.run(message)

    assert report.disposition == "Ran"
    assert claimed_before_waiting == [True]
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


@pytest.fixture
def steps(driver: Driver, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The executor's reads of the job and of its collection, its wait and its action, in
    the order they happen."""
    taken: list[str] = []

    def recorded(step: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            taken.append(step)
            return real(*args, **kwargs)

        return call

    for module in (claims, execute):
        for name, step in (("find_job", "job"), ("get_collection", "collection")):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, recorded(step, getattr(module, name)))
    monkeypatch.setattr(execute, "run_action", recorded("action", execute.run_action))
    driver.clock.sleep = recorded("wait", driver.clock.sleep)  # type: ignore[method-assign]
    return taken


def test_at_its_second_the_action_starts_after_one_read_of_the_job_and_one_of_its_collection(
    driver: Driver, target: HttpTarget, steps: list[str]
) -> None:
    """Whatever the executor does between the occurrence's second and its action is lateness.
    After the wait it reads the job and its collection once each: the collection that the
    confirmation read also gives the signing secrets (it was read a second time for them)."""
    job = make_job(driver.store, http_action(target.url))
    driver.clock.now = T0 - timedelta(seconds=1.6)

    report = driver.run(ExecutionMessage.scheduled(job.key, T0, 1))

    assert report.disposition == "Ran" and len(target.requests) == 1
    after_the_wait = steps[steps.index("wait") : steps.index("action") + 1]
    assert after_the_wait == ["wait", "job", "collection", "action"]


@pytest.mark.parametrize("kind", ["manual run", "occurrence delivered after its second"])
def test_an_attempt_that_does_not_wait_reads_its_collection_once(
    driver: Driver, target: HttpTarget, steps: list[str], kind: str
) -> None:
    """An attempt run as soon as it is claimed (a manual run, a retry, an occurrence
    delivered at or after its second) takes its signing secrets from the collection its
    claim read: the collection is not read a second time before the action."""
    job = make_job(driver.store, http_action(target.url))
    message = (
        ExecutionMessage.manual_run(job.key, now=T0)
        if kind == "manual run"
        else ExecutionMessage.scheduled(job.key, T0 - timedelta(seconds=1), 1)
    )

    report = driver.run(message)

    assert report.disposition == "Ran" and len(target.requests) == 1
    assert steps[: steps.index("action") + 1] == ["job", "collection", "action"]
