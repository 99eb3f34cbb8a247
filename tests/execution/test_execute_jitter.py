"""The executor and `maxJitter`: a jittered occurrence starts at its jittered second, is
judged late against it, and its history entry and execution tag still name the scheduled
occurrence. Real Azurite tables and queue, a real local HTTP server, an injected clock."""

from __future__ import annotations

import re
from datetime import timedelta

from scheduler_lib.domain.messages import ExecutionMessage
from tests.execution.harness import T0, Driver, http_action, make_job
from tests.support.http_target import HttpTarget

DAILY = {"frequency": "Day", "interval": 1}
OFFSET = timedelta(minutes=40)


def test_it_starts_at_the_jittered_second_and_names_the_occurrence(
    late_driver: Driver, target: HttpTarget
) -> None:
    driver = late_driver
    job = make_job(driver.store, http_action(target.url), recurrence=DAILY)
    message = ExecutionMessage.scheduled(job.key, T0, 1, start=T0 + OFFSET)
    driver.clock.now = T0 + OFFSET - timedelta(seconds=1.5)  # delivered a little early

    report = driver.run(message)

    assert report.disposition == "Ran", report
    [request] = target.requests
    assert (
        request.header("x-ms-execution-tag")
        == ExecutionMessage.scheduled(job.key, T0, 1).execution_tag
    )
    [entry] = driver.history(job.key)
    assert entry.expected_execution_time == T0  # the occurrence, not its start
    assert entry.start_time >= T0 + OFFSET  # waited for the jittered second


def test_lateness_is_measured_from_the_jittered_start(
    late_driver: Driver, target: HttpTarget
) -> None:
    """40 minutes after the occurrence, 20 s after its jittered start: within PT30S, it runs;
    31 s after it, it is postponed, and says how late it was (from its start)."""
    driver = late_driver
    job = make_job(driver.store, http_action(target.url), recurrence=DAILY)
    driver.clock.now = T0 + OFFSET + timedelta(seconds=20)
    ran = driver.run(ExecutionMessage.scheduled(job.key, T0, 1, start=T0 + OFFSET))
    assert ran.disposition == "Ran"

    later = T0 + timedelta(days=1)
    driver.clock.now = later + OFFSET + timedelta(seconds=31)
    skipped = driver.run(ExecutionMessage.scheduled(job.key, later, 2, start=later + OFFSET))
    assert skipped.disposition == "Postponed"
    newest = driver.history(job.key)[-1]
    assert newest.expected_execution_time == later
    [late] = re.findall(r"started (\d+) s late", newest.message)
    assert 31 <= int(late) < 40  # from the jittered start, not 40 minutes


def test_the_message_keeps_its_jitter_through_the_queue() -> None:
    message = ExecutionMessage.scheduled("a|b|c|d", T0, 3, start=T0 + OFFSET)
    assert ExecutionMessage.from_json(message.to_json()).start_at == T0 + OFFSET
    plain = ExecutionMessage.scheduled("a|b|c|d", T0, 3)
    assert "jitter" not in plain.to_json()  # the form every message had before
    assert plain.start_at == T0 and plain.next_attempt().start_at is None
