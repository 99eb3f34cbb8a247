"""An occurrence missed by downtime, as counted: the real `Runtime`'s tick (coordinator and
every pair, as the timer and dispatch functions run them) postpones it, and its counters
say `Missed`. Real Azurite; time is the runtime's hand-moved clock."""

from __future__ import annotations

from datetime import timedelta

from scheduler_lib.config import Settings
from scheduler_lib.domain import Outcome
from scheduler_lib.metrics import Gauges, Scrape, catalog, render
from scheduler_lib.runtime import Runtime
from scheduler_lib.store import TableStore, list_history
from tests.dispatch.support import T0, definition, make_collection, make_job
from tests.metrics.support import stored, value
from tests.support.api_server import ManualClock


def test_a_postponement_after_downtime_counts_as_missed(
    store: TableStore, settings: Settings
) -> None:
    make_collection(store)
    job = make_job(store, "j", definition(T0 + timedelta(seconds=30)), created=T0)
    clock = ManualClock(T0 - timedelta(minutes=2))
    runtime = Runtime(settings, clock=clock, sleep=clock.sleep)
    runtime.tick()  # the last tick before the downtime: the cursor stays before the job's row
    clock.advance(timedelta(minutes=21))  # down for 20 minutes: past the grace period

    runtime.tick()
    runtime.flush_metrics(due_only=False)

    [entry], _ = list_history(store, job.history_key)
    assert entry.status == "Postponed"
    counted = stored(store, now=clock.now)
    assert value(counted, catalog.OCCURRENCES, outcome=Outcome.MISSED, collection="c1") == 1
    assert value(counted, catalog.OCCURRENCES) == 1


def test_every_completed_tick_is_counted_as_the_dispatchers_heartbeat(
    store: TableStore, settings: Settings
) -> None:
    """The timer function's path (`coordinate`) and the local host's whole tick each count
    one tick: the counter Azure Monitor's dispatcher-stalled alert waits for
    (infra/app/monitoring/dispatcher-stalled.kql), and Prometheus' heartbeat."""
    clock = ManualClock(T0)
    runtime = Runtime(settings, clock=clock, sleep=clock.sleep)
    runtime.coordinate()
    clock.advance(timedelta(minutes=1))
    runtime.tick()
    runtime.flush_metrics(due_only=False)

    counted = stored(store, now=clock.now)
    assert value(counted, catalog.DISPATCHER_TICKS) == 2
    scraped = render(Scrape(counted, 1, Gauges({}, None, 0)))
    assert b"\nscheduler_dispatcher_ticks_total 2.0\n" in scraped
