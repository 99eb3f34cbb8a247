"""What every route needs, built once per app: settings, storage clients, the clock.

The clients are handed in by whoever hosts the app (`Runtime` shares its own), or built
here; their tables and queues are created on first use rather than when the app is built,
so building the app (at Functions worker import) never touches the network.
"""

from __future__ import annotations

from dataclasses import dataclass

from scheduler_lib.config import Settings
from scheduler_lib.execution import ExecutionQueue
from scheduler_lib.store import TableStore
from scheduler_lib.timeutil import Clock
from scheduler_lib.wire.versions import DEFAULT_VERSION, ApiVersion


@dataclass
class ApiContext:
    settings: Settings
    clock: Clock
    table_store: TableStore
    execution_queue: ExecutionQueue
    #: The request's `api-version`: each request gets its own copy of the app's context
    #: with it (`dependencies`), so validation and responses follow the version asked for.
    version: ApiVersion = DEFAULT_VERSION

    @property
    def store(self) -> TableStore:
        """The table store, its tables created on first use."""
        return self.table_store.ready()

    @property
    def queue(self) -> ExecutionQueue:
        """The execution queue, created on first use."""
        return self.execution_queue.ready()
