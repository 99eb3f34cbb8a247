"""Storage requests are counted under their caller's stage (`storage_calls.stage_of`), for
the cost benchmark: the modules that only carry a request for someone else (the table
client's point requests, `store/entity_requests.py`, and the queue's message requests,
`store/queue_requests.py`) are never a stage. Real requests to Azurite, counted by the
benchmark's hook, made from a scheduler module (a table client's upsert, a
`store.kept_message` send, update and delete)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from scheduler_lib import storage_calls
from scheduler_lib.config import Settings
from scheduler_lib.store.execution_queue import ExecutionQueue
from scheduler_lib.store.kept_message import KeptMessage
from scheduler_lib.store.tables import TableStore

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _grown(before: dict[str, int]) -> Counter[str]:
    grown = Counter(storage_calls.snapshot())
    grown.subtract(before)
    return +grown


def test_point_and_queue_requests_count_under_their_callers_module(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(storage_calls.COUNT_CALLS_SETTING, str(tmp_path / "calls.json"))
    store = TableStore(settings)
    store.ensure_tables()
    queue = ExecutionQueue(settings).ready()
    before = storage_calls.snapshot()

    store.table("Jobs").upsert_entity({"PartitionKey": "p", "RowKey": "r"})
    kept = KeptMessage(queue, lambda: NOW, timedelta(seconds=60))
    kept.send_once("{}")
    kept.keep_hidden()
    kept.discard()

    stages = _grown(before)
    assert stages, "nothing counted"
    carriers = ("entity_requests", "table_client", "queue_requests")
    assert [stage for stage in stages if any(c in stage for c in carriers)] == []
    kept_requests = [n for stage, n in stages.items() if "store.kept_message [queue " in stage]
    assert sum(kept_requests) == 3  # its send, update and delete


def test_a_receive_ends_at_a_short_page(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A poll that finds fewer messages than it asked for makes one request, not a second
    for the empty page after them; a full page is followed by the next."""
    monkeypatch.setenv(storage_calls.COUNT_CALLS_SETTING, str(tmp_path / "calls.json"))
    queue = ExecutionQueue(settings).ready()
    for n in range(35):
        queue.send_body(str(n))

    def gets(**options: int) -> tuple[int, int]:
        before = storage_calls.snapshot()
        taken = queue.receive(visibility_timeout=30, **options)
        return len(taken), sum(n for stage, n in _grown(before).items() if "GET]" in stage)

    assert gets(max_messages=16) == (16, 1)  # a full page: all asked for
    assert gets(max_messages=40) == (19, 1)  # 19 of 32: short, the end
    queue.send_body("again")
    assert gets(max_messages=1) == (1, 1)
    assert gets(max_messages=5) == (0, 1)
