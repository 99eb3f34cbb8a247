"""How long one storage call may take before the caller gives up: a plain value each
storage adapter (`store/tables.py`, `execution_queue.py`) turns into its SDK's options.

The API answers a person or a client SDK waiting on the line, so it gives up after a few
seconds and says 503 (`INTERACTIVE`). The dispatcher and the executor run in the
background and are retried by their trigger anyway, so they keep the SDKs' own defaults
(`BACKGROUND`: a refused table read takes ~5 s, a refused queue send ~80 s).
"""

from __future__ import annotations

from dataclasses import dataclass


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


BACKGROUND = StoragePatience()
#: One retry (azure-core makes the first one at once); 2 s to connect, 5 s to answer. Measured
#: with storage stopped: a refused connection is answered 503 in ~0.01 s (SDK defaults: 500
#: after 4.8 s). A host that drops packets costs two 2-s connects; storage that accepts and
#: never answers, two 5-s reads. A normal request (tens of ms) is never cut off.
INTERACTIVE = StoragePatience(retries=1, backoff=0.25, connect_timeout=2, read_timeout=5)
