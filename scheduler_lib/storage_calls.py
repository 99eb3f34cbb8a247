"""Counting storage requests by stage, for the cost benchmark (`bench/cost.py`).

Storage is billed per request (transaction), so the benchmark needs to know how many each
occurrence makes and which part of the code makes them. `storage_account`, the one place
storage clients get their connections (`storage_connections`), gives them a `request_counter`
only when `SCHEDULER_BENCH_COUNT_CALLS` names a file: production pays nothing, not even an
import of this module.

A request's stage is read off the call stack: the function invocation it belongs to (the
`Runtime` method, or the local host's loop that polls a queue) and the innermost scheduler
module that asked for it, skipping the storage adapters themselves (`ADAPTERS`). The counts
are written as JSON to the file every second (replaced atomically), so a reader can take
a snapshot before and after a window and subtract.

Invocations are counted too (`invoked`, around each function the local host runs), with
the milliseconds they run (`seconds: <function>`, summed) and the milliseconds at least one
of them runs (`seconds: active`): Flex Consumption bills an instance's memory for the time
it is executing, so the active time is the GB-s meter and an invocation that waits (the
early-delivery hold) costs as much of it as one that works.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

#: The app setting naming the file the counts go to (unset: nothing is counted).
COUNT_CALLS_SETTING = "SCHEDULER_BENCH_COUNT_CALLS"

#: Modules that only carry a request for someone else: never a stage.
ADAPTERS = (
    "scheduler_lib.store.tables",
    "scheduler_lib.store.changeset",  # and changeset_body, changeset_answer
    "scheduler_lib.store.entity_",  # entity_requests, entity_queries, entity_answer
    "scheduler_lib.store.table_client",
    "scheduler_lib.store.etag",
    "scheduler_lib.storage_account",
    "scheduler_lib.storage_transport",
    "scheduler_lib.storage_calls",
    "scheduler_lib.store.execution_queue",
    "scheduler_lib.store.queue_requests",
    "scheduler_lib.store.storage_",  # storage_pipeline, storage_retries
    "scheduler_lib.store.grouped_writes",
    "scheduler_lib.group_commit",
    # Only carries a beat for someone else (a heartbeat's, a batch watchdog's): the stage is
    # theirs, as when each ran its own thread.
    "scheduler_lib.beats",
)

_counts: Counter[str] = Counter()
#: CPU microseconds by what spent them (`LOCAL_HOST_CPU`, `COUNTING_CPU`): apart from the
#: counts, which the tests subtract to count requests (a time is not a request).
_spent: Counter[str] = Counter()
_lock = threading.Lock()
_writer: threading.Thread | None = None
_running = 0  # invocations running now
_active_since = 0.0  # when the running ones started being at least one


def stage_of(frame: Any) -> str:
    """`entry: module [METHOD]` for the request being made in `frame`'s thread: the entry is
    the `Runtime` method (the function invocation), else the local host's outermost function
    (its queue polling and message settling, which the Functions host does in Azure), else
    the outermost scheduler module."""
    module = runtime = host = outermost = ""
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if name.startswith("scheduler_lib.") and not name.startswith(ADAPTERS):
            module = module or name.removeprefix("scheduler_lib.")
            outermost = name.removeprefix("scheduler_lib.")
        if name == "scheduler_lib.runtime" and not runtime:
            runtime = frame.f_code.co_name
        elif frame.f_code.co_filename.endswith("devhost.py"):  # also run as __main__
            host = f"host.{frame.f_code.co_name}"  # the outermost one wins: keep walking
        frame = frame.f_back
    # A pool thread (the dispatcher's) has no invocation on its stack: its outermost module.
    return f"{runtime or host or outermost or '?'}: {module or '-'}"


def count(stage: str) -> None:
    with _lock:
        _counts[stage] += 1


@contextmanager
def invoked(function: str, *, clock: Callable[[], float] = time.monotonic) -> Iterator[None]:
    """Count one invocation of `function` and the time it and the instance run."""
    global _running, _active_since
    start = clock()
    with _lock:
        _counts[f"invocation: {function}"] += 1
        if _running == 0:
            _active_since = start
        _running += 1
    try:
        yield
    finally:
        end = clock()
        with _lock:
            _counts[f"seconds: {function}"] += round((end - start) * 1000)
            _running -= 1
            if _running == 0:
                _counts["seconds: active"] += round((end - _active_since) * 1000)


#: The count of the CPU microseconds the local host spent on its own queue work.
LOCAL_HOST_CPU = "cpu_us: local host"
#: The count of the CPU microseconds this module spent counting the app's requests (reading
#: a stage off the stack): the benchmark's own cost, which production never pays.
COUNTING_CPU = "cpu_us: counting"

_thread = threading.local()  # `host`: inside `local_host_work` (its CPU counted there)


@contextmanager
def local_host_work() -> Iterator[None]:
    """Count the CPU this thread spends in the block as the local host's own queue work
    (its polls, and the delete or release after a function ran): what the Functions host
    does in Azure, so the cost benchmark shows it apart from the app's CPU."""
    start = time.thread_time()
    _thread.host = True
    try:
        yield
    finally:
        _thread.host = False
        spent = round((time.thread_time() - start) * 1e6)
        with _lock:
            _spent[LOCAL_HOST_CPU] += spent


def snapshot() -> dict[str, int]:
    """The requests and invocations counted so far."""
    with _lock:
        return dict(_counts)


def spent() -> dict[str, int]:
    """The CPU microseconds counted so far (`LOCAL_HOST_CPU`, `COUNTING_CPU`)."""
    with _lock:
        return dict(_spent)


def _write_forever(path: str) -> None:
    while True:
        temporary = f"{path}.tmp"
        with open(temporary, "w") as out:
            json.dump({**snapshot(), **spent()}, out)  # the benchmark reads both
        os.replace(temporary, path)
        threading.Event().wait(1.0)


def start_writer(path: str) -> None:
    """Write the counts to `path` every second from now on (once per process)."""
    global _writer
    with _lock:
        if _writer is None:
            _writer = threading.Thread(
                target=_write_forever, args=(path,), name="storage-calls", daemon=True
            )
            _writer.start()


def request_counter(kind: str) -> Callable[[str, str], None]:
    """What a storage session calls before each request it sends: counts it under its stage,
    its service (`kind`, e.g. "table" or "queue") and its method."""

    def counted(method: str, url: str) -> None:
        start = time.thread_time()
        service = f"{kind} batch" if "$batch" in url else kind
        stage = f"{stage_of(sys._getframe(1))} [{service} {method}]"
        host = getattr(_thread, "host", False)  # the local host's work counts this itself
        with _lock:
            _counts[stage] += 1
            if not host:
                _spent[COUNTING_CPU] += round((time.thread_time() - start) * 1e6)

    return counted
