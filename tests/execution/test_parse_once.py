"""Parse once: the executor parses an attempt's retry policy once per message, though the
follow-up decision (retry or errorAction) and its delay both use it. Real Azurite and a real
HTTP target; the count is taken at the parser, which still parses. (Already true before the
parse-once change: this pins it.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from scheduler_lib.domain import actions as policies
from scheduler_lib.domain.messages import ExecutionMessage
from tests.execution.harness import T0, Driver, http_action, make_job
from tests.support.http_target import HttpTarget


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real: Callable[..., Any] = policies.RetryPolicy.from_action.__func__  # type: ignore[attr-defined]

    def counting(
        cls: type[policies.RetryPolicy], action: Any, *, path: str = "action.retryPolicy"
    ) -> Any:
        calls.append(path)
        return real(cls, action, path=path)

    monkeypatch.setattr(policies.RetryPolicy, "from_action", classmethod(counting))
    return calls


@pytest.mark.parametrize("status", [200, 500], ids=["succeeded", "failed-then-retried"])
def test_one_message_parses_the_retry_policy_once(
    driver: Driver, target: HttpTarget, parses: list[str], status: int
) -> None:
    target.reply(status)
    job = make_job(driver.store, http_action(target.url), next_execution_time=T0)

    report = driver.run(ExecutionMessage.scheduled(job.key, T0, 1))

    assert (report.follow_up is not None) == (status == 500)
    assert parses == ["action.retryPolicy"]
