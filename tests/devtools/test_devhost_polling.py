"""The local host polls its queues as the Functions host's queue trigger does: an empty
receive doubles the wait before the next one, up to host.json's `maxPollingInterval`, and a
receive that returns a message starts over from the shortest wait (`devtools/polling.py`).
Before, every loop polled at a fixed 0.1-0.5 s: ~30 receives a second idle.

The early delivery (a scheduled occurrence visible 1-2 s before its second) must still let a
fully backed-off executor take the message before that second. Real Azurite, real queues,
the real executor against a real HTTP target; the back-off is driven through an injected
wait, so no test waits for it in real time."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from devtools import devhost
from devtools.azurite import ROOT, Azurite, free_port, port_open
from devtools.polling import MAX_POLLING_INTERVAL, Backoff, poll
from scheduler_lib.config import Settings
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.runtime import Runtime
from scheduler_lib.store.execution_queue import ExecutionQueue, ReceivedMessage
from scheduler_lib.wire.durations import parse_time_to_live
from tests.devtools.support import devhost_env
from tests.dispatch.support import definition, make_collection, make_job
from tests.support.http_target import HttpTarget

QUEUES = json.loads((ROOT / "host.json").read_text())["extensions"]["queues"]


def test_the_ceiling_is_host_jsons_max_polling_interval() -> None:
    host_json = parse_time_to_live(QUEUES["maxPollingInterval"]).total_seconds()
    assert host_json == MAX_POLLING_INTERVAL
    assert Backoff(0.1).maximum == MAX_POLLING_INTERVAL == 1.0


def test_an_empty_queue_doubles_the_wait_and_a_message_starts_it_over(
    queue: ExecutionQueue,
) -> None:
    stop = threading.Event()
    waits: list[float] = []
    handled: list[ReceivedMessage] = []

    def wait(seconds: float) -> bool:
        waits.append(seconds)
        if len(waits) == 6:
            queue.send_body("found")  # the next receive returns it
        return len(waits) == 9

    poll(
        stop,
        lambda: queue.receive(max_messages=1, visibility_timeout=600),
        handled.append,
        Backoff(0.1),
        what="test queue",
        wait=wait,
    )
    # Doubled from 0.1 s up to host.json's 1 s; after the message, from 0.1 s again.
    assert waits == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 0.1, 0.2, 0.4])
    assert [m.body for m in handled] == ["found"]


def test_the_executor_loop_backs_off_and_takes_all_it_has_slots_for(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through `devhost.worker_loop` itself: 0.5 s, then host.json's 1 s; three messages
    found at once are taken in one receive (three free slots), and the wait starts over."""
    runtime = Runtime(settings)
    runtime.ensure_storage()
    stop = threading.Event()
    waits: list[float] = []
    received: list[int] = []
    original = runtime.queue.receive

    def receive(**kwargs: int) -> list[ReceivedMessage]:
        messages = original(**kwargs)
        received.append(len(messages))
        return messages

    monkeypatch.setattr(runtime.queue, "receive", receive)  # counts, then the real one

    def wait(seconds: float) -> bool:
        waits.append(seconds)
        if len(waits) == 3:
            for _ in range(3):
                runtime.queue.send_body("not a message")  # fails: released for a retry
        return len(waits) == 5

    devhost.worker_loop(runtime, stop, concurrency=3, wait=wait)
    assert waits == pytest.approx([0.5, 1.0, 1.0, 0.5, 1.0])
    assert received == [0, 0, 0, 3, 0, 0]


def test_a_fully_backed_off_executor_still_starts_occurrences_on_their_second(
    settings: Settings,
) -> None:
    """The executor's loop waits host.json's full 1 s between polls when the occurrences'
    messages are sent, early in a second: each is visible nearly 2 s before its second (the
    queue's delay counts whole seconds from the send), so the loop takes it at most 1 s
    later, before that second, and the executor waits for the second itself (`sleep`).
    (Sent late in a second, a message is visible only ~1 s early: see `devtools/polling.py`.)"""
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        time.sleep(seconds)

    runtime = Runtime(settings, sleep=sleep)
    runtime.ensure_storage()
    make_collection(runtime.store)
    stop = threading.Event()
    backed_off = threading.Event()

    def wait(seconds: float) -> bool:
        if seconds == MAX_POLLING_INTERVAL:
            backed_off.set()
        return stop.wait(seconds)

    worker = threading.Thread(
        target=devhost.worker_loop, args=(runtime, stop), kwargs={"wait": wait}
    )
    with HttpTarget() as target:
        worker.start()
        try:
            assert backed_off.wait(30), "the loop never reached host.json's ceiling"
            now = runtime.clock()
            time.sleep(1 - now.microsecond / 1e6)  # send early in a second (see above)
            now = runtime.clock()
            first = now.replace(microsecond=0) + timedelta(seconds=2)
            due = [first + timedelta(seconds=k) for k in range(3)]
            for k, second in enumerate(due):
                props = definition(second, frequency=None)
                props["action"]["request"]["uri"] = target.url_for(f"/j{k}")
                record = make_job(runtime.store, f"j{k}", props, created=now)
                message = ExecutionMessage.scheduled(record.key, second, 1, record.incarnation)
                runtime.queue.send(message, visible_at=second, now=runtime.clock())
            requests = target.wait_for_requests(3, timeout=60)
        finally:
            stop.set()
            worker.join(timeout=60)
    expected = {
        r.path: (r.header("x-ms-scheduler-expected-execution-time") or "")[:19] for r in requests
    }
    assert expected == {f"/j{k}": _iso(second) for k, second in enumerate(due)}
    # Each was taken before its second: the executor waited for it (none started late).
    assert len(slept) == 3 and all(s > 0 for s in slept), slept


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


def test_an_idle_local_host_polls_each_queue_once_per_max_polling_interval(
    azurite: Azurite, settings: Settings
) -> None:
    """The running host (`python -m devtools.devhost`), its queue receives counted by
    `scheduler_lib/storage_calls.py` by loop: at host.json's 1 s each once backed off (before:
    the dispatch workers and the notifications every 0.1 s, ~30 receives a second in all)."""
    counts = Path(tempfile.mkdtemp(prefix="polling-")) / "counts.json"
    port = free_port()
    env = devhost_env(azurite, settings, SCHEDULER_BENCH_COUNT_CALLS=str(counts))
    host = subprocess.Popen(
        [sys.executable, "-m", "devtools.devhost", "--port", str(port)],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (port_open(port) and counts.exists()):
            assert time.monotonic() < deadline and host.poll() is None, "the host did not start"
            time.sleep(0.1)
        rates = _idle_receive_rates(counts, after=2 * MAX_POLLING_INTERVAL + 1)
    finally:
        host.terminate()
        host.wait(timeout=60)
    workers = Settings().dispatch_workers
    loops = {"worker_loop": 1, "poison_loop": 1, "notify_worker_loop": 1,
             "dispatch_worker_loop": workers}  # fmt: skip
    assert set(rates) == set(loops), rates
    for loop, n in loops.items():
        # Once a second each; under the machine's load a wait may run over, never under.
        assert 0.3 <= rates[loop] / n <= 1.25 / MAX_POLLING_INTERVAL, rates


def _idle_receive_rates(counts: Path, *, after: float) -> dict[str, float]:
    """Queue receives a second by loop over a window of at least 4 s that holds no dispatcher
    tick nor any other invocation (a tick's control messages wake the dispatch workers),
    starting `after` s from now."""
    time.sleep(after)  # the loops back off from their shortest wait to the ceiling
    for _ in range(3):
        start, before = _next_write(counts)
        end, later = _next_write(counts, not_before=start + 4)
        delta = Counter(later) - Counter(before)
        if not any(key.startswith("invocation:") for key in delta):  # idle throughout
            return {
                key.split(":")[0].removeprefix("host."): value / (end - start)
                for key, value in delta.items()
                if key.startswith("host.") and key.endswith("[queue GET]")
            }
    raise AssertionError("every window held a dispatcher tick")


def _next_write(counts: Path, *, not_before: float = 0.0) -> tuple[float, dict[str, int]]:
    """The counts as the host writes them next (every second) at or after `not_before`, with
    when it wrote them."""
    seen = counts.stat().st_mtime
    while True:
        time.sleep(0.05)
        written = counts.stat().st_mtime
        if written != seen and written >= not_before:
            try:
                return written, json.loads(counts.read_text())
            except (OSError, ValueError):  # replaced while read: the next write
                pass
        seen = written
