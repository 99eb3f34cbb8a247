"""How the local host's queue loops poll: as the Functions host's queue trigger does.

The queue trigger does not poll an empty queue at a fixed rate: after each receive that
finds nothing it waits longer, doubling its wait up to host.json's
`extensions.queues.maxPollingInterval` (1 s here), and as soon as a receive returns a
message it receives again at once and starts over from its shortest wait. The local host's
loops (the execution queue, the dispatch workers, the notifications, the poison queue) all
poll through `poll` with a `Backoff` for that reason: polled at a fixed 0.1-0.5 s, an idle
local host made ~30 queue receives a second, and their CPU was the noise in
`bench/cost.py`'s idle-subtracted numbers (docs/cost.md). The ceiling is read from
host.json (`devtools/host_json.py`) so that the two cannot disagree.

The early delivery of a scheduled occurrence (`store/execution_queue.py` EARLY_DELIVERY) is
sized for that ceiling: its message becomes visible 2 - f s before its second (f: the
fraction of a second it was sent at, the queue's delay counting whole seconds), a fully
backed-off loop takes it at most 1 s after that, and the executor waits for the second. Only
a message sent late in its second (f near 1) leaves the claim's round trips less than that
margin, and may start up to that much after its second, as in Azure, whose trigger has the
same ceiling (docs/cost.md, "The local host polls as the Functions host does").

The Functions host also randomises each step (by ±20 %); this one does not, so that the
waits can be tested exactly.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

from devtools.host_json import max_polling_interval

log = logging.getLogger("scheduler.devhost")

#: host.json's `maxPollingInterval`, in seconds: the longest wait between two polls.
MAX_POLLING_INTERVAL = max_polling_interval()

Message = TypeVar("Message")


class Backoff:
    """The wait before the next receive: none after one that found messages (and the next
    empty one waits `minimum` again), else `minimum`, doubled after each empty receive up
    to `maximum`."""

    def __init__(self, minimum: float, maximum: float = MAX_POLLING_INTERVAL) -> None:
        self.minimum = min(minimum, maximum)
        self.maximum = maximum
        self._next = self.minimum

    def after(self, *, found: bool) -> float:
        """Seconds to wait after a receive that `found` messages or not."""
        if found:
            self._next = self.minimum
            return 0.0
        wait = self._next
        self._next = min(self._next * 2, self.maximum)
        return wait


def poll(
    stop: threading.Event,
    receive: Callable[[], Sequence[Message]],
    handle: Callable[[Message], object],
    backoff: Backoff,
    *,
    what: str,
    wait: Callable[[float], bool] | None = None,
) -> None:
    """`receive` and `handle` each message received until `stop` is set, waiting as `backoff`
    says after a receive that found nothing (a receive that failed is logged and counts as
    empty: storage down, the loop backs off rather than spins). `wait(seconds)` returns True
    to stop; `stop.wait` unless a test hands in its own."""
    wait = wait or stop.wait
    while not stop.is_set():
        try:
            messages = receive()
        except Exception:
            log.exception("receiving from the %s failed", what)
            messages = ()
        for message in messages:
            handle(message)
        delay = backoff.after(found=bool(messages))
        if delay and wait(delay):
            return
