"""Fixtures shared by the whole suite.

`azurite` is one real Azurite per test session; `settings` gives each test its own storage
prefix, so tests see only their own tables and queues without restarting Azurite.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from devtools.azurite import Azurite, start_azurite
from scheduler_lib import storage_calls
from scheduler_lib.config import Settings
from scheduler_lib.store.execution_queue import ExecutionQueue
from scheduler_lib.store.tables import TableStore

# The executor's fixtures (target, clock, driver) for every test module that wants them.
pytest_plugins = ("tests.execution.harness",)


@pytest.fixture(scope="session")
def azurite() -> Iterator[Azurite]:
    server = start_azurite()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def settings(azurite: Azurite) -> Settings:
    """Settings pointing at the session's Azurite, isolated by a per-test prefix."""
    return Settings(
        storage_connection_string=azurite.connection_string,
        api_keys=("test-key",),
        storage_prefix="t" + uuid.uuid4().hex[:12],
        storage_queue_endpoint=azurite.queue_endpoint_template,
    )


@pytest.fixture
def store(settings: Settings) -> TableStore:
    """A TableStore over the test's own (prefixed) tables in Azurite, tables created."""
    store = TableStore(settings)
    store.ensure_tables()
    return store


@pytest.fixture
def counted_store(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> TableStore:
    """`store`'s tables through a TableStore whose requests are counted by stage, by the
    cost benchmark's hook (`storage_calls`, read with `storage_calls.snapshot()`)."""
    monkeypatch.setenv(storage_calls.COUNT_CALLS_SETTING, str(tmp_path / "calls.json"))
    store = TableStore(settings)
    store.ensure_tables()
    return store


@pytest.fixture
def queue(settings: Settings) -> ExecutionQueue:
    """The test's own execution queue (and poison queue) in Azurite."""
    queue = ExecutionQueue(settings)
    queue.ensure()
    return queue


def pytest_terminal_summary(terminalreporter) -> None:
    """Say loudly when the browser tests (the API page, the dashboard) or the Prometheus test
    (`GET /api/metrics` scraped) did not run: a green run without them has not shown that
    the pages work, or that Prometheus reads the metrics."""
    skipped = terminalreporter.stats.get("skipped", [])
    for what in ("BROWSER", "PROMETHEUS"):
        marker = f"{what} TEST NOT RUN"
        reasons = {str(r.longrepr[-1]) for r in skipped if marker in str(r.longrepr)}
        if reasons:
            terminalreporter.write_sep("!", f"{what} TESTS SKIPPED", red=True, bold=True)
            for reason in sorted(reasons):
                terminalreporter.write_line(reason.removeprefix("Skipped: "), red=True, bold=True)
