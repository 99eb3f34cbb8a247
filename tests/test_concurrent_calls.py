"""`concurrent_calls.ConcurrentCalls`: calls at once, each to its end, what each raised in
its place, the pool's bound kept, the caller's context carried. Threads meet at barriers
(a guard timeout fails the test; no sleep waits for anything)."""

from __future__ import annotations

import contextvars
import threading

from scheduler_lib.concurrent_calls import ConcurrentCalls

GUARD = 20.0
TRACE: contextvars.ContextVar[str] = contextvars.ContextVar("trace", default="")


def test_calls_run_at_once_and_a_failure_is_handed_back_in_its_place() -> None:
    meet = threading.Barrier(3, timeout=GUARD)  # all three must run at the same time

    def ok(value: int) -> int:
        meet.wait()
        return value

    def fails() -> int:
        meet.wait()
        raise RuntimeError("storage down")

    ended = ConcurrentCalls(4).run_all([lambda: ok(1), fails, lambda: ok(3)])

    assert ended[0] == 1 and ended[2] == 3
    assert isinstance(ended[1], RuntimeError) and str(ended[1]) == "storage down"


def test_past_the_bound_a_call_waits_for_a_thread() -> None:
    """A pool of one: the caller's own call and the pool's first meet (at once), and the
    pool's second starts only once its first ended."""
    meet = threading.Barrier(2, timeout=GUARD)
    first_ended = threading.Event()

    def first() -> None:
        meet.wait()
        first_ended.set()

    ended = ConcurrentCalls(1).run_all([meet.wait, first, first_ended.is_set])

    assert ended[2] is True


def test_each_call_runs_in_a_copy_of_the_callers_context() -> None:
    TRACE.set("invocation-1")
    seen = ConcurrentCalls(2).run_all([TRACE.get, TRACE.get, TRACE.get])
    assert seen == ["invocation-1"] * 3
