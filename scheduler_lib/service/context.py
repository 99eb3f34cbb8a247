"""What every use case needs, built once per app: settings, storage clients, the clock.
The API's routes and the dashboard's pages hand it to `service` functions with the
request's api-version (`version`).

The clients are handed in by whoever hosts the app (`Runtime` shares its own), or built
here; their tables and queues are created on first use rather than when the app is built,
so building the app (at Functions worker import) never touches the network. When storage
cannot be reached, a use case raises the Azure SDK's error; `storage_unavailable` says
whether that is an outage (a 503 with Retry-After) or a bug, for every front end alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from scheduler_lib.config import Settings
from scheduler_lib.execution import ExecutionQueue
from scheduler_lib.store import TableStore, storage_unavailable
from scheduler_lib.timeutil import Clock
from scheduler_lib.wire.versions import DEFAULT_VERSION, ApiVersion

__all__ = ["ApiContext", "storage_unavailable"]


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
