"""Calls that run at the same time, each to its end, on a bounded pool of threads.

The executor hands it the members of a batch message (`execution/execute.py`): occurrences
that start in the same second, each of which waits for that second and then runs its
action. Run one after the other, each member's wait and action would delay the next; run at
once, their waits overlap and the batch is held once. One member raising must not stop or
lose the others, so every call runs to its end and what it raised is returned in its place;
the caller decides what a failure means (the executor raises once all have ended, so the
host redelivers the batch).

The pool is one per worker process and bounded (`limit` threads), so many batches at once
on one instance share it: past the bound, a call waits for a thread in arrival order, as a
queue message waits for one of the Functions host's slots. The caller's thread runs the
first call itself, so a batch always makes progress even when the pool is busy, and a
batch of n takes n - 1 threads of the pool.

Each call runs in a copy of the caller's `contextvars` context, so what the invocation set
there (OpenTelemetry's current span, the logs' context) follows it onto its thread.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

#: The executor's bound: batch members one worker runs at once. A batch's members all wait
#: for the same second, so a full batch needs a thread for each (`BATCH_LIMIT`, 64) or its
#: last members start late; four full batches (256 occurrences of one second on one
#: instance) hold at once. Past that, members wait for a thread in arrival order, as
#: messages wait for the Functions host's 28 slots (host.json `batchSize` +
#: `newBatchThreshold`, which count queue messages, not members): one instance's CPU is the
#: bound well before (docs/capacity.md: more in flight only share it).
MEMBER_THREADS = 256


class ConcurrentCalls:
    """A bounded pool of threads for calls run side by side (see the module). Thread-safe;
    one per worker process. Its threads start on first use and stay for the next batch."""

    def __init__(self, limit: int, name: str = "member") -> None:
        self.limit = limit
        self._pool = ThreadPoolExecutor(max_workers=limit, thread_name_prefix=name)

    def run_all(self, calls: Sequence[Callable[[], T]]) -> list[T | Exception]:
        """Run `calls` at once and wait for every one: what each returned, or the exception
        it raised, in the order of `calls`. (A `BaseException` such as KeyboardInterrupt is
        not caught: it propagates once the caller's own call ends.)"""
        if not calls:
            return []
        futures: list[Future[T]] = [
            self._pool.submit(contextvars.copy_context().run, call) for call in calls[1:]
        ]
        ended: list[T | Exception] = [_ended(calls[0])]
        for future in futures:
            try:
                ended.append(future.result())
            except Exception as exc:  # the call's own failure, handed back in its place
                ended.append(exc)
        return ended


def _ended(call: Callable[[], T]) -> T | Exception:
    try:
        return call()
    except Exception as exc:
        return exc
