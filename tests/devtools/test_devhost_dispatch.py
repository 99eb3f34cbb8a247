"""The local host dispatches as Azure does: the timer loop only coordinates, and its
dispatch workers take the (minute, shard) control messages off the dispatch queue, each
under its shard's lease. Real `Runtime` with an injected clock, real Azurite."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

from devtools.devhost import dispatch_worker_loop
from scheduler_lib.config import Settings
from scheduler_lib.runtime import Runtime
from scheduler_lib.store.jobs import find_job
from tests.dispatch.support import T0, definition, make_collection, make_job

ONE_SECOND = timedelta(seconds=1)


def test_two_dispatch_workers_drain_a_coordinated_tick_and_send_each_occurrence_once(
    settings: Settings,
) -> None:
    runtime = Runtime(settings, clock=lambda: T0)
    runtime.ensure_storage()
    make_collection(runtime.store)
    # Two seconds apart: no two share a second, so each is a message of its own.
    jobs = [
        make_job(runtime.store, f"j{i}", definition(T0 + ONE_SECOND * (10 + 2 * i)))
        for i in range(20)
    ]

    runtime.coordinate()
    stop = threading.Event()
    workers = [
        threading.Thread(target=dispatch_worker_loop, args=(runtime, stop)) for _ in range(2)
    ]
    for worker in workers:
        worker.start()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not all(_advanced(runtime, j.key) for j in jobs):
            time.sleep(0.1)
    finally:
        stop.set()
        for worker in workers:
            worker.join(timeout=30)
    assert all(_advanced(runtime, j.key) for j in jobs)
    # One execution message per occurrence, none doubled (invisible ones count too), and no
    # control message left behind.
    assert runtime.queue.client.get_queue_properties().approximate_message_count == len(jobs)
    assert runtime.dispatch_queue.receive(max_messages=32) == []


def _advanced(runtime: Runtime, key: str) -> bool:
    job = find_job(runtime.store, key)
    return job is not None and job.bookkeeping.occurrences == 1
