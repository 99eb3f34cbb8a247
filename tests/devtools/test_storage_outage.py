"""Storage down for a while under a running local host: once it is back, the host recovers
within seconds, not after whatever back-off the storage SDKs had reached (the queue SDK's
default waits 15, 18 and 24 s between tries, so a poll started during an outage came back
up to 24 s after storage did, and a history write given up after ~5 s left its message
hidden for the visibility timeout, then ran the action a second time).

A real Azurite of the test's own, with its data on disk, stopped and started again on the
same ports; the local host's executor loop (`worker_loop`) and the real `Runtime` on the
real clock (the queue's visibility delays are real time); a real HTTP target. One-time
jobs: `running`, whose action is in flight when storage stops (its history is written
during the outage), and two whose messages become visible during the outage and which
start later than the grace period (10 s here), so each is judged by its missedRunPolicy as
after downtime: `during` (RunLatest) runs late, `skipped` (Skip, the default) is Postponed."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from devtools.azurite import Azurite, start_azurite
from devtools.devhost import worker_loop
from scheduler_lib.config import Settings
from scheduler_lib.domain import JobRecord
from scheduler_lib.runtime import Runtime
from scheduler_lib.storage_patience import INTERACTIVE
from scheduler_lib.store.history import HistoryEntry, list_history
from scheduler_lib.store.tables import TableStore
from scheduler_lib.timeutil import utc_now
from tests.dispatch.support import definition, make_collection, make_job
from tests.support.http_target import HttpTarget

#: How long storage is down: longer than the SDKs' first back-offs (15 s for a queue call).
OUTAGE = 20.0
#: Seconds after storage is back within which each job must have moved on: the storage
#: clients retry a second apart, so a quiet machine sees ~1 s; the bound leaves room for a
#: loaded one (a restarted Azurite answers its first requests slowly) and still fails the
#: behaviour it guards against, the SDKs' back-offs of 15-24 s.
RECOVERY = 8.0
#: How long the test waits for a job after storage is back before it calls it lost.
PATIENCE = 45.0


@pytest.fixture
def own_azurite(tmp_path: Path) -> Iterator[list[Azurite]]:
    """An Azurite that keeps its data on disk, in a list the test may replace it in."""
    servers = [start_azurite(location=tmp_path / "azurite")]
    try:
        yield servers
    finally:
        servers[-1].stop()


def _waited(condition: Callable[[], bool], since: float) -> float | None:
    """Seconds from `since` until `condition` held (polled), None if it never did."""
    deadline = since + PATIENCE
    while time.monotonic() < deadline:
        if condition():
            return time.monotonic() - since
        time.sleep(0.05)
    return None


def test_the_host_recovers_within_seconds_of_storage_coming_back(
    settings: Settings, own_azurite: list[Azurite], tmp_path: Path
) -> None:
    azurite = own_azurite[0]
    ports = (azurite.blob_port, azurite.queue_port, azurite.table_port)
    settings = replace(
        settings,
        storage_connection_string=azurite.connection_string,
        grace_period=timedelta(seconds=10),
    )
    runtime = Runtime(settings)
    runtime.ensure_storage()
    make_collection(runtime.store)
    reader = TableStore(settings, patience=INTERACTIVE)
    stop = threading.Event()
    worker = threading.Thread(target=worker_loop, args=(runtime, stop), name="outage-worker")
    jobs: dict[str, JobRecord] = {}

    def history(name: str) -> list[HistoryEntry]:
        entries, _ = list_history(reader, jobs[name].history_key, page_size=10)
        return entries

    with HttpTarget() as target:
        target.reply(delay=4, path="/running")  # in flight when storage stops
        now = utc_now().replace(microsecond=0)
        for name, seconds, policy in (
            ("running", 4, "Skip"), ("during", 12, "RunLatest"), ("skipped", 12, "Skip"),
        ):  # fmt: skip
            props = definition(now + timedelta(seconds=seconds), frequency=None)
            props["action"]["request"]["uri"] = target.url_for("/" + name)
            props["missedRunPolicy"] = policy
            jobs[name] = make_job(runtime.store, name, props, created=now)
        assert runtime.tick().messages_sent == 3
        worker.start()
        try:
            target.wait_for_requests(1, timeout=30)
            azurite.stop()  # data kept on disk
            time.sleep(OUTAGE)  # the outage itself: nothing to wait for but time
            own_azurite.append(start_azurite(location=tmp_path / "azurite", ports=ports))
            up = time.monotonic()

            arrived = _waited(lambda: len(target.requests_to("/during")) >= 1, up)
            written = _waited(lambda: bool(history("running")), up)
            postponed = _waited(lambda: bool(history("skipped")), up)
        finally:
            stop.set()
            worker.join(timeout=60)
        measured = (
            f"storage back; `during` ran after {arrived} s, `running` recorded after "
            f"{written} s, `skipped` recorded after {postponed} s"
        )
        for seconds in (arrived, written, postponed):
            assert seconds is not None and seconds <= RECOVERY, measured
        assert len(target.requests_to("/running")) == 1  # not run a second time
        assert len(target.requests_to("/during")) == 1
        assert target.requests_to("/skipped") == []
        assert [e.status for e in history("skipped")] == ["Postponed"]
        statuses = sorted((e.status, e.message.split(" ")[0]) for e in history("during"))
        assert statuses == [("Completed", "[CatchUp]"), ("Postponed", "Postponed:")]
