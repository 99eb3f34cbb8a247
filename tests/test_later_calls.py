"""Calls made a given number of seconds from now, on one thread (`later_calls`): in the order
they fall due whatever the order asked, not before, and each whatever another raised.

The instances here read a clock the test moves (`_Clock`): a call asked for later is made
only once the test has moved the clock past it and asked for one more call (which wakes the
thread); each test waits on an event that call sets, so nothing is read before it is made."""

from __future__ import annotations

import threading

import pytest

from scheduler_lib.later_calls import LaterCalls


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _settled(later: LaterCalls) -> None:
    """Ask for a call due now and wait until it is made: every call due before it is, too."""
    done = threading.Event()
    later.after(0, done.set)
    assert done.wait(10), "the later thread made no call"


def test_calls_are_made_in_the_order_they_fall_due_and_not_before() -> None:
    clock, made = _Clock(), []
    later = LaterCalls(clock)
    later.after(3.0, lambda: made.append("three"))
    later.after(1.0, lambda: made.append("one"))
    later.after(2.0, lambda: made.append("two"))
    _settled(later)
    assert made == [] and later.pending() == 3

    clock.now += 2.0
    _settled(later)
    assert made == ["one", "two"] and later.pending() == 1

    clock.now += 5.0
    _settled(later)
    assert made == ["one", "two", "three"] and later.pending() == 0


def test_a_call_that_raises_does_not_stop_the_others(caplog: pytest.LogCaptureFixture) -> None:
    clock, made = _Clock(), []
    later = LaterCalls(clock)

    def fails() -> None:
        raise RuntimeError("this caller's own failure")

    later.after(1.0, fails)
    later.after(1.0, lambda: made.append("after it"))
    clock.now += 1.0
    _settled(later)
    assert made == ["after it"]
    assert "a later call raised" in caplog.text
