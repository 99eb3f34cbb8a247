"""Reads of one key that overlap in time share one storage request.

When many occurrences of one job collection are claimed at once (a thousand jobs due at the
same second, or a busy instance whose storage round trips have slowed), each claim reads
the same collection entity. A claim that finds that read already under way waits for its
answer instead of sending a request of its own; one that finds none sends it. Nothing is
kept once the read ends, so at a quiet moment every claim reads for itself as before, and
the saving grows with the load, where it matters.

What it costs: a claim may act on a read that began up to one round trip before the claim
asked for it. That is the same kind of moment the executor already accepts at an
occurrence's second (a collection disabled in the last 1-2 s is seen from the next
occurrence, `claims.claim` with `early`), and far shorter. Only the executor uses it: the
API keeps read-your-writes (a GET after a PUT of the same client never joins a read older
than it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class _Flight(Generic[V]):
    """One read under way: its answer once it ends (`failed` if it raised)."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: V | None = None
        self.failed = False
        self.waiting = 0


class SharedReads(Generic[K, V]):
    """Single-flight reads by key (see the module). Thread-safe; one per worker process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._flights: dict[K, _Flight[V]] = {}
        #: Reads that took another's answer instead of sending a request (what the tests
        #: check; never reset).
        self.shared = 0

    def read(self, key: K, load: Callable[[], V]) -> V:
        """`load()`'s answer for `key`: that of a read of `key` already under way, else this
        caller's own. A read that raised is not shared: each caller that waited on it then
        reads for itself (a missing entity, or storage failing, is its own to see)."""
        with self._lock:
            flight = self._flights.get(key)
            leader = flight is None
            if flight is None:
                flight = self._flights[key] = _Flight()
            else:
                flight.waiting += 1
        if not leader:
            flight.done.wait()
            if flight.failed:
                return load()
            with self._lock:
                self.shared += 1
            return flight.value  # type: ignore[return-value]  # set before `done` unless failed
        try:
            flight.value = load()
        except BaseException:
            flight.failed = True
            raise
        finally:
            with self._lock:
                del self._flights[key]
            flight.done.set()
        return flight.value

    def waiting(self, key: K) -> int:
        """Callers waiting on the read of `key` under way (0 when none is)."""
        with self._lock:
            flight = self._flights.get(key)
            return flight.waiting if flight is not None else 0
