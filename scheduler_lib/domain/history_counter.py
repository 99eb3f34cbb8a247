"""What the executor last knew of a job's history counter, kept in the job's executor state.

A history entry is written with its partition's counter (`store/history_cap.py`): read the
counter, then insert the entry and update the counter in one transaction conditioned on the
counter's ETag. The executor reads the job entity at the claim and writes it at the finish
anyway, so it keeps there what its last entry left the counter at (count, the oldest ids it
remembers, its ETag): the next attempt writes its entry with that, in the transaction alone.
Whatever changed the counter meanwhile (an entry written by another path, a racing attempt,
housekeeping) fails the transaction on the ETag, and the write falls back to reading the
counter; a crash before the finish leaves an older snapshot, which fails the same way.

`etag` None: the partition has no counter and no entry (a job created by this version, before
its first entry): that entry is written with a create of the counter, which fails if anyone
created it first. Absent (`ExecutorState.history` None): nothing known, the counter is read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class HistoryCounter:
    """A snapshot of a history partition's counter entity (see module doc)."""

    count: int = 0
    #: The counter's remembered oldest entry ids (oldest last), as stored with it.
    oldest: tuple[str, ...] = ()
    #: The counter entity's ETag; None: no counter and no entry yet.
    etag: str | None = None

    @classmethod
    def from_stored(cls, stored: Mapping[str, Any]) -> HistoryCounter:
        oldest = stored.get("oldest") or []
        return cls(
            count=int(stored.get("count") or 0),
            oldest=tuple(str(row) for row in oldest),
            etag=stored.get("etag") or None,
        )

    def to_stored(self) -> dict[str, Any]:
        stored: dict[str, Any] = {"count": self.count, "etag": self.etag}
        if self.oldest:
            stored["oldest"] = list(self.oldest)
        return stored


#: A new job's history: no counter, no entry.
EMPTY_HISTORY = HistoryCounter()
