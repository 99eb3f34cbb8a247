"""bench/azurite_empty_remove.js, the opt-in preload that spares Azurite's queue service its
index rebuilds (docs/cost.md, "Azurite's cost as the tables grow"), answers as Azurite
does without it: a receive takes each visible message once and hides it, an invisible one
stays out of reach, a delete removes exactly its message. A preload that broke LokiJS's
indices would hand the same message out twice or lose one here.

Against a real Azurite started with the preload (`NODE_OPTIONS`, as a benchmark runs it),
through the scheduler's queue client."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from devtools.azurite import start_azurite
from scheduler_lib.config import Settings
from scheduler_lib.store.execution_queue import ExecutionQueue

PRELOAD = Path(__file__).resolve().parents[1] / "bench" / "azurite_empty_remove.js"


def test_queue_answers_are_unchanged_by_the_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NODE_OPTIONS", f"--require={PRELOAD}")
    azurite = start_azurite()
    try:
        settings = Settings(
            storage_connection_string=azurite.connection_string,
            storage_prefix="p" + uuid.uuid4().hex[:6],
        )
        queue = ExecutionQueue(settings).ready()
        hidden = queue.send_body("hidden", delay_seconds=3600)
        for i in range(20):
            queue.send_body(f"m{i}")

        first = queue.receive(max_messages=16)
        second = queue.receive(max_messages=16)
        assert queue.receive(max_messages=16) == []
        bodies = [m.body for m in [*first, *second]]
        assert sorted(bodies) == sorted(f"m{i}" for i in range(20))
        assert all(m.dequeue_count == 1 for m in [*first, *second])

        for message in first[:5]:
            queue.delete(message)
        assert queue.depth() == 16  # the 15 still hidden by their receive, and `hidden`
        for message in [*first[5:], *second]:
            queue.delete(message)
        assert queue.depth() == 1
        queue.discard(hidden)
        assert queue.depth() == 0
    finally:
        azurite.stop()
