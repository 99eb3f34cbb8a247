"""Fixtures of the store tests beyond tests/conftest.py's (`settings`, `store`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler_lib import storage_calls
from scheduler_lib.config import Settings
from scheduler_lib.store.tables import TableStore


@pytest.fixture
def counting(settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> TableStore:
    """A store whose requests the cost benchmark's hook counts (real requests), its tables
    created before anything is counted."""
    monkeypatch.setenv(storage_calls.COUNT_CALLS_SETTING, str(tmp_path / "calls.json"))
    store = TableStore(settings)
    store.ensure_tables()
    return store
