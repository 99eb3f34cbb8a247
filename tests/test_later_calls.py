"""Calls made a given number of seconds from now, on one thread (`later_calls`): in the order
they fall due whatever the order asked, not before, and each whatever another raised. On a
clock the test moves (`tests/support/later.py`): nothing is read before it is made."""

from __future__ import annotations

import pytest

from scheduler_lib.later_calls import LaterCalls
from tests.support.later import Moved, settled


def test_calls_are_made_in_the_order_they_fall_due_and_not_before() -> None:
    clock, made = Moved(), list[str]()
    later = LaterCalls(clock)
    later.after(3.0, lambda: made.append("three"))
    later.after(1.0, lambda: made.append("one"))
    later.after(2.0, lambda: made.append("two"))
    settled(later)
    assert made == [] and later.pending() == 3

    clock.now += 2.0
    settled(later)
    assert made == ["one", "two"] and later.pending() == 1

    clock.now += 5.0
    settled(later)
    assert made == ["one", "two", "three"] and later.pending() == 0


def test_a_call_that_raises_does_not_stop_the_others(caplog: pytest.LogCaptureFixture) -> None:
    clock, made = Moved(), list[str]()
    later = LaterCalls(clock)

    def fails() -> None:
        raise RuntimeError("this caller's own failure")

    later.after(1.0, fails)
    later.after(1.0, lambda: made.append("after it"))
    clock.now += 1.0
    settled(later)
    assert made == ["after it"]
    assert "a later call raised" in caplog.text
