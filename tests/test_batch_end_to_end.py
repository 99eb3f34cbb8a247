"""Several jobs due at one second, end to end: created through the real API, sent by the
real dispatcher's tick as one batch message (`dispatch/batch.py`), run by the real executor
from that one queue message (`Runtime.execute_queued`, what the queue trigger calls), over
Azurite and a real local HTTP target, on the driven clock of tests/test_end_to_end.py (the
tick at the jobs' second, so the messages are visible at once and no wait is slept). The
dispatcher batches within a shard's chunk, so 16 jobs over its shards take at most one
message per shard."""

from __future__ import annotations

from datetime import timedelta

from scheduler_lib.domain.messages import parse_body
from tests import test_end_to_end as e2e
from tests.support.http_target import HttpTarget
from tests.test_end_to_end import COLLECTION, T0, System

system, target = e2e.system, e2e.target


def test_jobs_due_at_one_second_are_sent_as_one_message_and_all_run_from_it(
    system: System, target: HttpTarget
) -> None:
    names = [f"Same-Second-{i}" for i in range(16)]
    for name in names:
        system.put(f"{COLLECTION}/jobs/{name}", {"properties": {
            "startTime": "2026-03-04T09:10:00Z",
            "recurrence": {"frequency": "Hour", "interval": 1},
            "action": {"type": "Http", "request": {"uri": target.url, "method": "POST"}},
        }})  # fmt: skip
    system.clock.now = T0 + timedelta(minutes=10)
    system.runtime.dispatcher.tick(now=system.clock.now)

    received = system.queue.receive(max_messages=32, visibility_timeout=60)
    assert len(received) <= system.settings.dispatch_shards
    assert sum(len(parse_body(message.body)) for message in received) == 16
    reports = []
    for message in received:  # one invocation each, as the queue trigger runs them
        reports += system.runtime.execute_queued(
            message.body, message_id=message.id, dequeue_count=message.dequeue_count
        )
        system.queue.delete(message)

    assert [report.disposition for report in reports] == ["Ran"] * 16
    assert len(target.requests) == 16
    for name in names:
        history = system.get(f"{COLLECTION}/jobs/{name}/history")["value"]
        assert [entry["properties"]["status"] for entry in history] == ["Completed"]
    assert system.queue.receive(max_messages=32) == []
