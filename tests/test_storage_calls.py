"""The cost benchmark's invocation clock: the instance is billed while at least one
invocation runs, so overlapping invocations count their own seconds in full and the active
seconds once."""

from __future__ import annotations

import threading
import time

from scheduler_lib import storage_calls


def test_overlapping_invocations_count_the_active_time_once() -> None:
    now = [100.0]
    before = storage_calls.snapshot()
    first = storage_calls.invoked("executions", clock=lambda: now[0])
    second = storage_calls.invoked("executions", clock=lambda: now[0])
    first.__enter__()
    now[0] += 1.0
    second.__enter__()
    now[0] += 2.0
    first.__exit__(None, None, None)  # ran 3 s; the second still runs
    now[0] += 1.5
    second.__exit__(None, None, None)  # ran 3.5 s
    now[0] += 10.0  # nothing runs: not active
    with storage_calls.invoked("dispatcher", clock=lambda: now[0]):
        now[0] += 0.25
    after = storage_calls.snapshot()

    def grew(key: str) -> int:
        return after.get(key, 0) - before.get(key, 0)

    assert grew("invocation: executions") == 2 and grew("invocation: dispatcher") == 1
    assert grew("seconds: executions") == 6500 and grew("seconds: dispatcher") == 250
    assert grew("seconds: active") == 4500 + 250


def test_the_local_host_work_counts_its_threads_cpu_only() -> None:
    """CPU spent in the block is counted (a busy loop), time waited is not (a sleep)."""
    before = storage_calls.spent().get(storage_calls.LOCAL_HOST_CPU, 0)
    with storage_calls.local_host_work():
        end = time.thread_time() + 0.05
        while time.thread_time() < end:
            pass
    busy = storage_calls.spent()[storage_calls.LOCAL_HOST_CPU] - before
    with storage_calls.local_host_work():
        threading.Event().wait(0.2)
    waited = storage_calls.spent()[storage_calls.LOCAL_HOST_CPU] - before - busy
    assert 50_000 <= busy < 150_000
    assert waited < 20_000


def test_counting_a_request_counts_its_own_cpu_apart_unless_the_local_host_made_it() -> None:
    """The benchmark's stage reading is its own cost: counted as `COUNTING_CPU` for the
    app's requests (the report takes it off the app's CPU), and not again for the local
    host's, whose block counts all of its CPU already."""
    counted = storage_calls.request_counter("table")

    def deep(levels: int) -> None:  # a deep stack: reading the stage off it costs CPU
        if levels:
            deep(levels - 1)
        else:
            for _ in range(200):
                counted("GET", "http://127.0.0.1/Jobs()")

    before, counted_before = storage_calls.spent(), storage_calls.snapshot()
    deep(150)
    app, counted_after = storage_calls.spent(), storage_calls.snapshot()
    with storage_calls.local_host_work():
        deep(150)
    host = storage_calls.spent()

    def grew(key: str, start: dict[str, int], end: dict[str, int]) -> int:
        return end.get(key, 0) - start.get(key, 0)

    # The counts hold the 200 requests and nothing else: their CPU is counted apart.
    assert sum(counted_after.values()) - sum(counted_before.values()) == 200
    assert grew(storage_calls.COUNTING_CPU, before, app) > 0
    assert grew(storage_calls.COUNTING_CPU, app, host) == 0
    assert grew(storage_calls.LOCAL_HOST_CPU, app, host) > 0
