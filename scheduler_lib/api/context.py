"""What every route needs, built once per app: settings, storage clients, the clock.

Tables and the execution queue are created on first use rather than when the app is built,
so building the app (at Functions worker import) never touches the network.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from scheduler_lib.config import Settings
from scheduler_lib.execution_queue import ExecutionQueue
from scheduler_lib.store.tables import TableStore


@dataclass
class ApiContext:
    settings: Settings
    clock: Callable[[], datetime]
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _tables_ready: bool = False
    _queue_ready: bool = False

    @cached_property
    def _store(self) -> TableStore:
        return TableStore(self.settings)

    @property
    def store(self) -> TableStore:
        """The table store, its tables created on first use (idempotent)."""
        if not self._tables_ready:
            with self._lock:
                if not self._tables_ready:
                    self._store.ensure_tables()
                    self._tables_ready = True
        return self._store

    @cached_property
    def _queue(self) -> ExecutionQueue:
        return ExecutionQueue(self.settings)

    @property
    def queue(self) -> ExecutionQueue:
        """The execution queue, created on first use."""
        if not self._queue_ready:
            with self._lock:
                if not self._queue_ready:
                    self._queue.ensure()
                    self._queue_ready = True
        return self._queue
