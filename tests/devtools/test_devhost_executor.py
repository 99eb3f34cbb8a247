"""The local host's executor runs `SCHEDULER_EXECUTOR_CONCURRENCY` messages at once. A
scheduled occurrence holds its slot from its early delivery (1-2 s before its second) to its
end, so the slots bound how many occurrences start each second: with host.json's 28 of one
instance, 2,000 in a minute waited in the queue and started late. Real `Runtime` (its clock
fixed at the occurrences' second), real Azurite, a real HTTP target."""

from __future__ import annotations

import threading
from dataclasses import replace

from devtools.devhost import worker_loop
from scheduler_lib.config import Settings
from scheduler_lib.runtime import Runtime
from tests.dispatch.support import T0, definition, make_collection, make_job
from tests.support.http_target import HttpTarget

#: More than one instance's 28 (host.json batchSize + newBatchThreshold).
SLOTS = 40


def test_the_local_host_runs_as_many_messages_at_once_as_its_setting(settings: Settings) -> None:
    runtime = Runtime(replace(settings, executor_concurrency=SLOTS), clock=lambda: T0)
    runtime.ensure_storage()
    make_collection(runtime.store)
    stop = threading.Event()
    with HttpTarget() as target:
        target.reply(delay=120)  # each request is held until the target closes
        for i in range(SLOTS):
            props = definition(T0, frequency=None)
            props["action"]["request"]["uri"] = target.url_for(f"/j{i}")
            make_job(runtime.store, f"j{i}", props)
        assert runtime.tick().messages_sent == SLOTS
        worker = threading.Thread(target=worker_loop, args=(runtime, stop), name="slots")
        worker.start()
        try:
            # Every message is in flight at once: none waits for another's slot.
            held = target.wait_for_requests(SLOTS, timeout=60)
        finally:
            stop.set()
            target.close()  # releases the held requests
            worker.join(timeout=60)
    assert sorted(r.path for r in held) == sorted(f"/j{i}" for i in range(SLOTS))
