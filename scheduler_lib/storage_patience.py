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

    @property
    def worst_case(self) -> float | None:
        """The longest a call can take (seconds) when every attempt times out."""
        if self.retries is None or self.connect_timeout is None or self.read_timeout is None:
            return None
        attempts = self.retries + 1
        return attempts * (self.connect_timeout + self.read_timeout) + self.retries * self.backoff


BACKGROUND = StoragePatience()
#: One retry a quarter second later; 2 s to connect, 5 s to answer: a refused connection
#: costs ~0.3 s, an unreachable host ~4.5 s, and storage that is merely slow is not cut off
#: in the middle of a normal request.
INTERACTIVE = StoragePatience(retries=1, backoff=0.25, connect_timeout=2, read_timeout=5)
