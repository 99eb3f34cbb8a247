"""The health report: storage reachability and the dispatcher's last tick, from real
storage (Azurite) and a real dispatcher tick."""

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from scheduler_lib.config import Settings
from scheduler_lib.dispatch.tick import run_tick
from scheduler_lib.health import STALE_AFTER, check_health
from scheduler_lib.store.execution_queue import ExecutionQueue
from scheduler_lib.store.tables import TableStore
from tests.dispatch.support import make_collection, make_jobs

NOW = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)


def _store(settings: Settings) -> TableStore:
    store = TableStore(settings)
    store.ensure_tables()
    return store


def test_before_any_tick_the_dispatcher_is_degraded(settings: Settings) -> None:
    status, body = check_health(_store(settings), now=NOW)
    assert status == 200
    assert body["status"] == "Degraded"
    assert body["dispatcher"]["lastTick"] is None


def test_a_recent_tick_is_healthy_and_an_old_one_degraded(settings: Settings) -> None:
    store = _store(settings)
    queue = ExecutionQueue(settings)
    queue.ensure()
    run_tick(store, queue, settings, now=NOW)
    status, body = check_health(store, now=NOW + timedelta(seconds=30))
    assert (status, body["status"]) == (200, "Healthy")
    assert body["dispatcher"]["lastTick"] == "2026-03-04T09:00:00Z"
    assert body["dispatcher"]["secondsSinceLastTick"] == 30.0
    assert body["dispatcher"]["lastTickSummary"]["messages_sent"] == 0
    later = NOW + STALE_AFTER + timedelta(seconds=1)
    assert check_health(store, now=later)[1]["status"] == "Degraded"


def test_the_summary_shows_the_queue_messages_the_occurrences_took(settings: Settings) -> None:
    """Occurrences due at the same second leave as one batch message: the health summary
    shows both numbers, so an operator sees what the queue was charged for."""
    settings = replace(settings, dispatch_shards=1)  # a batch is per shard
    store = _store(settings)
    queue = ExecutionQueue(settings)
    queue.ensure()
    make_collection(store)
    make_jobs(store, 3, NOW)
    run_tick(store, queue, settings, now=NOW)
    summary = check_health(store, now=NOW)[1]["dispatcher"]["lastTickSummary"]
    assert (summary["messages_sent"], summary["queue_sends"]) == (3, 1)


def test_unreachable_storage_is_503(settings: Settings) -> None:
    from devtools.azurite import free_port

    dead = settings.storage_connection_string.replace(
        settings.storage_connection_string.split("TableEndpoint=")[1].split(";")[0],
        f"http://127.0.0.1:{free_port()}/devstoreaccount1",
    )
    store = TableStore(replace(settings, storage_connection_string=dead))
    status, body = check_health(store, now=NOW)
    assert status == 503
    assert body["status"] == "Unhealthy" and body["storage"]["reachable"] is False
