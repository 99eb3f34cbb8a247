"""Deleting a job does not delete its history in the request: it is purged in the background
(each tick a bounded share, housekeeping the rest). A job created again under the same name
meanwhile neither sees the old entries nor loses its own to the purge. Real HTTP, Azurite."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx

from scheduler_lib.config import Settings
from scheduler_lib.housekeeping import run_housekeeping
from scheduler_lib.runtime import Runtime
from scheduler_lib.store.history import HistoryEntry, add_history, list_history
from scheduler_lib.store.history_purge import (
    pending_history_purges,
    purge_histories,
    request_history_purge,
)
from scheduler_lib.store.jobs import get_job
from scheduler_lib.store.tables import TableStore
from tests.api.conftest import RG, SUB, job_body, job_path, make_collection

NOW = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
OLD_ENTRIES = 250


def _fill(store: TableStore, history_key: str, count: int, message: str) -> None:
    for index in range(count):
        start = NOW - timedelta(minutes=index)
        add_history(
            store,
            HistoryEntry(history_key, start, start, start, "MainAction", "Completed", message),
        )


def _api_history(client: httpx.Client) -> list[str]:
    response = client.get(job_path() + "/history")
    assert response.status_code == 200, response.text
    return [entry["properties"]["message"] for entry in response.json()["value"]]


def test_delete_leaves_the_history_to_the_background_and_a_new_job_keeps_its_own(
    client: httpx.Client, store: TableStore, settings: Settings
) -> None:
    make_collection(client)
    assert client.put(job_path(), json=job_body()).status_code == 201
    old = get_job(store, SUB, RG, "coll", "job1")
    _fill(store, old.history_key, OLD_ENTRIES, "old")

    assert client.delete(job_path()).status_code == 200
    assert len(list_history(store, old.history_key, page_size=1000)[0]) == OLD_ENTRIES

    # Created again while the purge is pending: its own history, empty.
    assert client.put(job_path(), json=job_body()).status_code == 201
    new = get_job(store, SUB, RG, "coll", "job1")
    assert new.history_key != old.history_key
    assert _api_history(client) == []
    add_history(
        store, HistoryEntry(new.history_key, NOW, NOW, NOW, "MainAction", "Completed", "new")
    )

    # Ticks purge a bounded share each; the new job's entry is never touched.
    runtime = Runtime(settings)
    assert purge_histories(store, budget=100) == 100
    runtime.upkeep(NOW + timedelta(minutes=1))
    runtime.upkeep(NOW + timedelta(minutes=2))
    assert list_history(store, old.history_key)[0] == []
    assert pending_history_purges(store) == []
    assert _api_history(client) == ["new"]


def test_housekeeping_finishes_what_ticks_left(client: httpx.Client, store: TableStore) -> None:
    make_collection(client)
    assert client.put(job_path(), json=job_body()).status_code == 201
    old = get_job(store, SUB, RG, "coll", "job1")
    _fill(store, old.history_key, 30, "old")
    assert client.delete(job_path()).status_code == 200

    report = run_housekeeping(store, now=NOW)

    assert report.history_purged == 30
    assert list_history(store, old.history_key)[0] == [] and pending_history_purges(store) == []


def test_a_job_recreated_after_the_purge_uses_its_plain_key_again(
    client: httpx.Client, store: TableStore
) -> None:
    make_collection(client)
    assert client.put(job_path(), json=job_body()).status_code == 201
    old = get_job(store, SUB, RG, "coll", "job1")
    assert client.delete(job_path()).status_code == 200
    purge_histories(store)

    assert client.put(job_path(), json=job_body()).status_code == 201
    assert get_job(store, SUB, RG, "coll", "job1").history_key == old.key


def test_a_purge_of_a_job_that_survived_its_delete_is_cancelled(
    client: httpx.Client, store: TableStore
) -> None:
    """A DELETE requests the purge before it deletes the job; if the delete then loses a race
    (the job changed since it was read), the job lives on and the purge must not run."""
    make_collection(client)
    assert client.put(job_path(), json=job_body()).status_code == 201
    job = get_job(store, SUB, RG, "coll", "job1")
    _fill(store, job.history_key, 3, "kept")
    request_history_purge(store, job.history_key)  # the DELETE's first step; then it lost

    assert purge_histories(store) == 0 and pending_history_purges(store) == []
    assert _api_history(client) == ["kept"] * 3
