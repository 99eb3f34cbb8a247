"""How long one storage call may take before the caller gives up: a plain value each
storage adapter (`store/tables.py`, `execution_queue.py`) turns into its SDK's options.

The API answers a person or a client SDK waiting on the line, so it gives up after a few
seconds and says 503 (`INTERACTIVE`). The dispatcher, the executor and the local host's
queue polling run in the background (`BACKGROUND`): they keep trying through an outage, but
a second apart, so that a call is answered within about a second of storage coming back.
The SDKs' own defaults did neither: a refused table call gave up after ~5 s (the executor's
invocation then failed, and its message waited for the host's redelivery), while a queue
call slept 15, 18 and 24 s between its tries, so a poll started during a 60 s outage came
back up to 24 s after storage did, and everything due meanwhile ran that much later.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class StoragePatience:
    """`retries` after the first attempt, `backoff` seconds apart; `connect_timeout` and
    `read_timeout` per attempt. None: the SDK's defaults."""

    retries: int | None = None
    backoff: float = 0.0
    connect_timeout: float | None = None
    read_timeout: float | None = None

    def transport_options(self) -> dict[str, float]:
        """The azure-core timeouts every storage client accepts."""
        options: dict[str, float] = {}
        if self.connect_timeout is not None:
            options["connection_timeout"] = self.connect_timeout
        if self.read_timeout is not None:
            options["read_timeout"] = self.read_timeout
        return options

    def retry_options(self) -> dict[str, Any]:
        """azure-core's `RetryPolicy` options (azure-data-tables' retry policy is one, and
        `store/changeset.py` builds one from the same values)."""
        if self.retries is None:
            return {}
        return {
            "retry_total": self.retries,
            "retry_connect": self.retries,
            "retry_read": self.retries,
            "retry_status": self.retries,
            "retry_backoff_factor": self.backoff,
            "retry_mode": "fixed",
        }


#: A try a second apart for about a minute and a half: a 60 s outage is ridden out without
#: failing the invocation (whose message the Functions host would only retry 30 s later,
#: host.json `visibilityTimeout`), and the call goes through within a second of storage
#: answering again. A host that drops packets costs 5 s per try, not azure-core's 300 s.
#: Measured (tests/devtools/test_storage_outage.py, Azurite stopped for 20 s under the local
#: host): the occurrence due during the outage ran 15.6 s after storage came back with the
#: SDKs' defaults, within a second with this.
BACKGROUND = StoragePatience(retries=90, backoff=1.0, connect_timeout=5)
#: One retry (azure-core makes the first one at once); 2 s to connect, 5 s to answer. Measured
#: with storage stopped: a refused connection is answered 503 in ~0.01 s (SDK defaults: 500
#: after 4.8 s). A host that drops packets costs two 2-s connects; storage that accepts and
#: never answers, two 5-s reads. A normal request (tens of ms) is never cut off.
INTERACTIVE = StoragePatience(retries=1, backoff=0.25, connect_timeout=2, read_timeout=5)
