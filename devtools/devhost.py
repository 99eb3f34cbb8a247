"""The local Functions host: the triggers of `function_app.py` in one process.

The Azure Functions Core Tools cannot run everywhere (not on this project's CI), so this
host runs the same `Runtime` methods the functions call:

- the API under uvicorn at http://127.0.0.1:PORT/api (the HTTP trigger),
- the dispatcher's coordinator at second 0 of every minute (the timer trigger
  `0 * * * * *`; at start-up only if a tick was missed, as the host's `use_monitor` does, see
  `timer_monitor`), and `SCHEDULER_DISPATCH_WORKERS` dispatch workers, each taking one
  (minute, shard) control message at a time off the dispatch queue as the dispatch
  function does (so shards are dispatched in parallel under their leases, as in Azure),
- a worker that consumes the execution queue as the queue trigger does: messages are
  hidden for 10 minutes when taken (the Functions host's dequeue visibility; it renews that
  while a function runs, which no invocation here lasts long enough to need), deleted on
  success, made visible again after host.json's `visibilityTimeout` on failure, and moved
  to the poison queue after its `maxDequeueCount` dequeues. A host that is killed leaves its
  messages hidden those 10 minutes, as in Azure: what brings an attempt back sooner is its
  claim's lease and watchdog (`scheduler_lib/execution/lease.py`), not the queue;
- a worker on the poison queue, as the poison-queue trigger: each poisoned message is
  recorded in its job's history and status, then deleted;
- the daily housekeeping at `housekeeping.DAILY_AT` UTC, as the daily timer trigger (a host
  left running locally keeps its history bounded as a deployed one does; a day missed while
  it was stopped runs at start-up, as with the dispatcher);
- the metrics' flush, as `function_app.py` starts it (`Runtime.keep_metrics_flushed`).

Every queue loop polls as the queue trigger does (`devtools/polling.py`): an empty receive
doubles the wait before the next one up to host.json's `maxPollingInterval` (1 s), a message
starts it over from its shortest (0.1 s for the dispatch and notifications queues, 0.5 s
for the others). Idle, that is one receive a second per loop, five in all.

Settings come from the environment as in Azure: without `SCHEDULER_EXECUTION_QUEUE` or
`SCHEDULER_DISPATCH_QUEUE` (bound by the queue triggers) it stops at start-up naming the
missing one; `make run` sets both.

Ctrl-C or SIGTERM stops uvicorn first, then lets the worker finish the message in hand;
a message taken but not finished simply becomes visible again, so none is lost.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from datetime import datetime, timedelta
from typing import Any

import uvicorn

from devtools import thread_profile
from devtools.host_json import queue_trigger_settings
from devtools.polling import Backoff, poll
from devtools.timer_monitor import TimerMonitor
from scheduler_lib.config import Settings
from scheduler_lib.errors import ValidationError
from scheduler_lib.execution import ExecutionQueue, ReceivedMessage
from scheduler_lib.heap import freeze_startup_objects
from scheduler_lib.housekeeping import next_daily_run
from scheduler_lib.logs import configure_logging
from scheduler_lib.runtime import Runtime
from scheduler_lib.storage_calls import COUNT_CALLS_SETTING, invoked, local_host_work

#: App setting naming a pstats file: the host runs under `thread_profile` and writes it at exit.
PROFILE_SETTING = "SCHEDULER_BENCH_PROFILE"
#: Function invocations are counted with the storage calls (`bench/cost.py`) when it is set.
COUNT_INVOCATIONS = bool(os.environ.get(COUNT_CALLS_SETTING))


@contextmanager
def invocation(function: str) -> Iterator[None]:
    """One invocation of `function`, as the Functions host would bill it: counted, with the
    time it runs, only for the cost benchmark."""
    with invoked(function) if COUNT_INVOCATIONS else nullcontext():
        yield


log = logging.getLogger("scheduler.devhost")

#: host.json's queues section, as the Functions host applies it to every queue trigger.
MAX_DEQUEUE_COUNT, RETRY_VISIBILITY = queue_trigger_settings()
VISIBILITY_TIMEOUT = 600  # seconds a taken message stays hidden (the Functions host's 10 min)
#: Seconds an idle loop first waits before polling again, doubled after each empty poll up
#: to host.json's maxPollingInterval (`devtools/polling.py`).
POLL_INTERVAL = 0.5
#: A dispatch worker starts shorter: a control message is at the start of a minute's work.
DISPATCH_POLL_INTERVAL = 0.1


def next_minute(now: datetime) -> datetime:
    """Second 0 of the minute after `now`: when the timer trigger fires next."""
    return now.replace(second=0, microsecond=0) + timedelta(minutes=1)


def dispatcher_loop(runtime: Runtime, stop: threading.Event) -> None:
    """Coordinate at every minute boundary (and at start-up if a tick was missed), until
    `stop` is set."""
    monitor = TimerMonitor(runtime.store, "dispatcher", next_minute)
    run_timer(runtime, stop, monitor, runtime.coordinate,
              failed="dispatcher tick failed; the next tick resumes from the cursors")  # fmt: skip


def run_timer(
    runtime: Runtime,
    stop: threading.Event,
    monitor: TimerMonitor,
    function: Callable[[], object],
    *,
    failed: str,
) -> None:
    """A timer trigger with `use_monitor=True`: `function` at start-up only if `monitor` says
    an occurrence was missed, then at each occurrence of its schedule, until `stop` is set.
    Every run, failed or not, is recorded (the host's schedule status)."""

    def fire(occurrence: datetime) -> None:
        try:
            with invocation(monitor.function):
                function()
        except Exception:
            log.exception(failed)
        monitor.record_run(occurrence, runtime.clock())

    now = runtime.clock()
    if monitor.past_due(now):
        log.info("%s: an occurrence was missed while stopped; running it now", monitor.function)
        fire(now)
        now = runtime.clock()
    while True:
        occurrence = monitor.schedule(now)
        if stop.wait(max(0.0, (occurrence - now).total_seconds())):
            return
        fire(occurrence)
        now = runtime.clock()


def dispatch_worker_loop(runtime: Runtime, stop: threading.Event) -> None:
    """Handle control messages one at a time until `stop` is set (the dispatch function:
    deleted when handled, made visible again on failure, poisoned after MAX_DEQUEUE_COUNT)."""
    _queue_loop(runtime.dispatch_queue, lambda m: runtime.dispatch(m.body), stop)


def notify_worker_loop(runtime: Runtime, stop: threading.Event) -> None:
    """Deliver notices one at a time until `stop` is set (the notifications function)."""
    _queue_loop(runtime.notifier.queue, lambda m: runtime.notify(m.body), stop)


def _queue_loop(
    queue: ExecutionQueue, run: Callable[[ReceivedMessage], object], stop: threading.Event
) -> None:
    poll(
        stop,
        lambda: _received(queue, max_messages=1),
        lambda message: _settle(queue, message, run),
        Backoff(DISPATCH_POLL_INTERVAL),
        what=f"{queue.name} queue",
    )


def housekeeping_loop(runtime: Runtime, stop: threading.Event) -> None:
    """Run the daily housekeeping whenever its time of day comes (and at start-up if a day
    was missed), until `stop` is set."""
    monitor = TimerMonitor(runtime.store, "housekeeping", next_daily_run)
    run_timer(runtime, stop, monitor, runtime.housekeeping,
              failed="housekeeping failed; it runs again tomorrow")  # fmt: skip


def worker_loop(
    runtime: Runtime,
    stop: threading.Event,
    *,
    concurrency: int | None = None,
    wait: Callable[[float], bool] | None = None,
) -> None:
    """Consume the execution queue until `stop` is set, as the queue trigger does: up to
    `concurrency` messages (`SCHEDULER_EXECUTOR_CONCURRENCY`) run at once, each on its own
    thread, so one slow HTTP target does not hold up the others.

    A scheduled occurrence holds its slot from its early delivery, 1-2 s before its second,
    to its end, so the slots bound the occurrences started per second to about a half of
    `concurrency`: with host.json's 28 per instance (`batchSize` + `newBatchThreshold`) 2,000
    occurrences in a minute (33/s) waited in the queue for a slot and started late. In Azure
    the host adds instances; one local host needs the slots instead.

    A batch message takes one slot, as one invocation does in Azure; its members run on the
    executor's own threads (`Executor.members`).

    Each receive asks for as many messages as there are free slots; an empty one backs off
    (`polling.Backoff`; `wait` as in `polling.poll`)."""
    concurrency = concurrency or runtime.settings.executor_concurrency
    slots = threading.Semaphore(concurrency)

    def receive() -> list[ReceivedMessage]:
        free = _acquire_free(slots, concurrency)
        messages: list[ReceivedMessage] = []
        try:
            messages = _received(runtime.queue, max_messages=free)
        finally:  # the slots no message took (all of them if the receive failed)
            for _ in range(free - len(messages)):
                slots.release()
        return messages

    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="executor") as pool:
        poll(
            stop,
            receive,
            lambda message: pool.submit(_run_and_release, runtime, message, slots),
            Backoff(POLL_INTERVAL),
            what="execution queue",
            wait=wait,
        )


def _acquire_free(slots: threading.Semaphore, limit: int) -> int:
    """Wait for at least one free slot, then take every free one (up to `limit`)."""
    slots.acquire()
    taken = 1
    while taken < limit and slots.acquire(blocking=False):
        taken += 1
    return taken


def _run_and_release(
    runtime: Runtime, message: ReceivedMessage, slots: threading.Semaphore
) -> None:
    try:
        process_message(runtime, message)
    finally:
        slots.release()


def process_message(runtime: Runtime, message: ReceivedMessage) -> None:
    """Run one message (a lone execution message, or a batch's members at once); delete
    it, release it for another try, or poison it."""
    _settle(
        runtime.queue,
        message,
        lambda m: runtime.execute_queued(m.body, message_id=m.id, dequeue_count=m.dequeue_count),
    )


def _settle(
    queue: ExecutionQueue, message: ReceivedMessage, run: Callable[[ReceivedMessage], object]
) -> None:
    """What the queue trigger does around a function: `run` the message, then delete it,
    release it for another try, or poison it."""
    try:
        with invocation(queue.name):
            run(message)
    except Exception:
        with local_host_work():
            if message.dequeue_count >= MAX_DEQUEUE_COUNT:
                log.exception("message %s failed %d times: poisoned", message.id, MAX_DEQUEUE_COUNT)
                queue.move_to_poison(message)
            else:
                visible_at = queue.release(message, delay_seconds=RETRY_VISIBILITY)
                log.exception("message %s failed; it will be retried at %s", message.id, visible_at)
        return
    with local_host_work():
        queue.delete(message)


def _received(queue: ExecutionQueue, **options: Any) -> list[ReceivedMessage]:
    """A poll of `queue`, as the queue trigger polls (its CPU counted as the host's own)."""
    with local_host_work():
        return queue.receive(visibility_timeout=VISIBILITY_TIMEOUT, **options)


def poison_loop(runtime: Runtime, stop: threading.Event) -> None:
    """Consume the poison queue until `stop` is set (the poison-queue trigger), one message
    at a time: poisoning is rare. A message that fails is tried again later."""
    poll(
        stop,
        lambda: _received(runtime.queue, max_messages=1, poisoned=True),
        lambda message: process_poisoned(runtime, message),
        Backoff(POLL_INTERVAL),
        what="poison queue",
    )


def process_poisoned(runtime: Runtime, message: ReceivedMessage) -> None:
    """Record one poisoned message; delete it, or release it for another try."""
    try:
        runtime.record_poisoned(message.body, message_id=message.id)
    except Exception:
        log.exception("poisoned message %s could not be recorded; it will be retried", message.id)
        with local_host_work():
            runtime.queue.release(message, delay_seconds=RETRY_VISIBILITY, poisoned=True)
        return
    with local_host_work():
        runtime.queue.delete(message, poisoned=True)


def serve(
    settings: Settings,
    *,
    port: int = 7071,
    host: str = "127.0.0.1",
    on_started: Callable[[], None] | None = None,
) -> None:
    """Run the API, the dispatcher and the worker until interrupted."""
    runtime = Runtime(settings)
    runtime.ensure_storage()
    stop = threading.Event()
    threads = [
        threading.Thread(target=dispatcher_loop, args=(runtime, stop), name="dispatcher"),
        threading.Thread(target=worker_loop, args=(runtime, stop), name="worker"),
        *(
            threading.Thread(target=dispatch_worker_loop, args=(runtime, stop), name=f"dispatch{i}")
            for i in range(settings.dispatch_workers)
        ),
        threading.Thread(target=poison_loop, args=(runtime, stop), name="poison"),
        threading.Thread(target=notify_worker_loop, args=(runtime, stop), name="notify"),
        threading.Thread(target=housekeeping_loop, args=(runtime, stop), name="housekeeping"),
    ]
    # uvicorn's own X-Forwarded-* handling off: which forwarded headers count is the app's
    # decision (SCHEDULER_TRUSTED_PROXIES, `front_end.py`), as in Azure.
    config = uvicorn.Config(
        runtime.api, host=host, port=port, log_level="warning", proxy_headers=False
    )
    server = uvicorn.Server(config)
    for thread in threads:
        thread.start()
    threads.append(runtime.keep_metrics_flushed(stop))  # counters to storage, once a minute
    freeze_startup_objects()  # as function_app.py does
    log.info("API listening on http://%s:%d/api", host, port)
    if on_started:
        on_started()
    # uvicorn handles Ctrl-C/SIGTERM with a graceful shutdown, then re-raises the signal
    # to the handler it found; these make that re-raise a no-op, so the threads below
    # are joined and the process exits 0.
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _ignore_signal)
    try:
        server.run()
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        runtime.flush_metrics(due_only=False)  # what was counted since the last flush
        log.info("stopped")


def _ignore_signal(signum: int, frame: object) -> None:
    log.info("received signal %d; stopping", signum)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m devtools.devhost", description="Run the scheduler locally."
    )
    parser.add_argument("--port", type=int, default=7071)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args(argv)
    try:
        settings = Settings.from_env()
    except ValidationError as error:  # a missing or malformed app setting: one line, by name
        raise SystemExit(f"devhost: app setting {error}") from None
    configure_logging(settings)
    profile = os.environ.get(PROFILE_SETTING)
    if profile:
        thread_profile.install()
    serve(settings, port=args.port, host=args.host)
    if profile:
        thread_profile.dump(profile)


if __name__ == "__main__":
    main()
