"""Parse once: a tick parses each due job's schedule once, though three steps use it (the
batched write of its next row, the send that advances it, a postponement), and parses it
again only when the job's timing changed between the read and the write. Real Azurite; the
count is taken at the engine's parser, whatever module calls it (the schedule engine's own
`parse_schedule`, and `JobDefinition.timing`, which parses a stored job's timing)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from scheduler_lib.config import Settings
from scheduler_lib.dispatch.tick import run_tick
from scheduler_lib.domain import definition as definition_module
from scheduler_lib.schedule import recurrence
from scheduler_lib.store.tables import TableStore
from tests.dispatch.support import T0, RecordingQueue, definition, make_job, reload


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The engine's parser, counting its calls (it still parses: nothing is faked)."""
    calls: list[str] = []
    real: Callable[..., Any] = recurrence.parse_job_timing

    def counting(job: dict[str, Any]) -> Any:
        calls.append(str(job.get("startTime")))
        return real(job)

    monkeypatch.setattr(recurrence, "parse_job_timing", counting)
    monkeypatch.setattr(definition_module, "parse_job_timing", counting)  # a stored job's
    return calls


def test_a_tick_parses_each_due_job_once(
    store: TableStore, queue: RecordingQueue, settings: Settings, parses: list[str]
) -> None:
    jobs = [make_job(store, f"j{i}", definition(T0 + timedelta(seconds=10 + i))) for i in range(5)]
    parses.clear()

    report = run_tick(store, queue, settings, now=T0)

    assert report.messages_sent == 5
    assert len(parses) == 5  # was 10: once for the batched row write, once for the send
    assert all(reload(store, job).next_execution_time == T0 + timedelta(hours=1, seconds=10 + i)
               for i, job in enumerate(jobs))  # fmt: skip


def test_a_postponing_tick_still_parses_the_job_once(
    store: TableStore, queue: RecordingQueue, settings: Settings, parses: list[str]
) -> None:
    """Down for three hours after a tick at 08:58: the hourly job's occurrences due since 09:00
    are postponed in one step (and it continues at the next one after now)."""
    run_tick(store, RecordingQueue(settings), settings, now=T0 - timedelta(minutes=2))
    job = make_job(store, "late", definition(T0), created=T0 - timedelta(minutes=10))
    parses.clear()

    report = run_tick(store, queue, settings, now=T0 + timedelta(hours=3, minutes=30))

    assert report.postponed == 1 and len(parses) == 1
    assert reload(store, job).next_execution_time == T0 + timedelta(hours=4)
