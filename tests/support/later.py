"""`later_calls.LaterCalls` on a clock the test moves (`Moved`): a call asked for later is
made once the test moved the clock past it and `settled` (which asks for one more call,
due now, waking the thread, and waits until it is made: every call due before it is too)."""

from __future__ import annotations

import threading

from scheduler_lib.later_calls import LaterCalls


class Moved:
    """A monotonic clock the test moves: `now` seconds."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def settled(later: LaterCalls) -> None:
    """Return once every call due by the clock's `now` has been made."""
    done = threading.Event()
    later.after(0, done.set)
    assert done.wait(10), "the later thread made no call"
