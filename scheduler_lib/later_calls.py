"""Calls made a given number of seconds from now, all on one thread per process.

An attempt's heartbeat first renews its lease `lease.HEARTBEAT` (3 s) after the attempt is
watched, but most attempts are over well before that: an HTTP call of tens of milliseconds
after a wait of at most 2 s for its second. A thread started per attempt only to wait out
those 3 s and be stopped costs the attempt ~0.3 ms of CPU (its start and join, more than a
storage request's signing and parsing), so the heartbeat (and a batch's watchdog) asks
for its first beat here instead (`beats.Beats.start`) and starts its thread only if that
moment comes while the attempt still runs.

What a call may do: something short (start a thread, set an event). They run one after
another on the one thread, so a slow call delays the others; one that raises is logged and
the others still run. There is no cancelling: a caller that no longer wants its call makes
it do nothing (the heartbeat checks whether it was stopped meanwhile), and the call is
dropped once made. Delays are real seconds on `time.monotonic`, like `threading.Event.wait`
which the heartbeat used for the same wait (a cadence, not a schedule instant).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)


class LaterCalls:
    """The calls asked for (`after`) and the one thread that makes them when due. Thread-safe;
    its thread starts on first use and stays (a daemon: it never holds a process open)."""

    def __init__(self, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._monotonic = monotonic
        self._due: list[tuple[float, int, Callable[[], None]]] = []
        self._order = itertools.count()  # equal moments: in the order asked
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def after(self, seconds: float, call: Callable[[], None]) -> None:
        """Make `call()` once `seconds` have passed (at once if they are not positive)."""
        with self._changed:
            heapq.heappush(self._due, (self._monotonic() + seconds, next(self._order), call))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="later", daemon=True)
                self._thread.start()
            self._changed.notify()

    def pending(self) -> int:
        """Calls asked for and not made yet (what the tests read)."""
        with self._changed:
            return len(self._due)

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._due or self._due[0][0] > self._monotonic():
                    wait = self._due[0][0] - self._monotonic() if self._due else None
                    self._changed.wait(wait)
                _, _, call = heapq.heappop(self._due)
            try:
                call()
            except Exception:  # one caller's failure is not the others'
                log.exception("a later call raised")


#: The process's one instance (the heartbeats'), as the worker's pool of member threads is.
LATER = LaterCalls()
