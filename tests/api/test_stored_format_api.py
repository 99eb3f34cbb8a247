"""No data migration: jobs as an earlier version stored them read and write back unchanged.

`stored_jobs.json` holds the Jobs entities main wrote before issue 21 gave the definition a
type (every action type, each 2026-12-01 extension, a 2016-03-01 job with TimeSpan
durations), and what its API answered for each in both versions; `capture_stored_jobs.py`
captured them from real Azurite. Here they are written into Azurite as they are: the API of
today must answer exactly that, and reading a job and writing it back must store the same
JSON, byte for byte.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from scheduler_lib.store.jobs import TABLE, get_job, put_job
from scheduler_lib.store.tables import TableStore
from tests.api.conftest import RG, SUB, api_client, make_collection

CAPTURED = json.loads((Path(__file__).parent / "stored_jobs.json").read_text())
JOBS = {job["entity"]["Name"]: job for job in CAPTURED["jobs"]}
#: The columns that hold JSON the code writes (the rest are plain values).
JSON_COLUMNS = ("Definition", "OriginalForm", "Bookkeeping")


def _entity(captured: dict[str, Any]) -> dict[str, Any]:
    return {
        key: datetime.fromisoformat(value["datetime"]) if isinstance(value, dict) else value
        for key, value in captured.items()
    }


@pytest.fixture
def stored(client, store: TableStore) -> TableStore:
    """The captured entities in the test's Jobs table, under a collection of the same name."""
    make_collection(client, sku={"name": "Standard"})
    for job in CAPTURED["jobs"]:
        store.table(TABLE).upsert_entity(_entity(job["entity"]))
    return store


def test_the_fixture_covers_every_action_type_and_extension() -> None:
    definitions = [job["entity"]["Definition"] for job in CAPTURED["jobs"]]
    for needle in ('"Http"', '"Https"', '"StorageQueue"', '"ServiceBusQueue"',
                   '"ServiceBusTopic"', "concurrencyPolicy", "missedRunPolicy",
                   "catchUpWindow", "maxJitter", "pauseAfterConsecutiveFailures", "pauseNote",
                   '"placeholders":false', "envelope", "maxRetryInterval", "retryOn",
                   '"timeout"', "ManagedServiceIdentity", "errorAction"):  # fmt: skip
        assert any(needle in text for text in definitions), needle
    assert any("00:01:30" in job["entity"].get("OriginalForm", "") for job in CAPTURED["jobs"])


#: Status fields an api-version answers that did not exist when the fixture was captured:
#: the only difference allowed, and each must be present (`health`: the dead-man switch's
#: judgement, docs/notifications.md).
ADDED = {"2016-03-01": (), "2026-12-01": ("health",)}


@pytest.mark.parametrize("version", ["2016-03-01", "2026-12-01"])
@pytest.mark.parametrize("name", sorted(JOBS))
def test_a_job_stored_by_main_is_answered_as_main_answered(
    stored, server, clock, name: str, version: str
) -> None:
    clock.now = datetime.fromisoformat(CAPTURED["now"])
    with api_client(server, version=version) as http:
        got = http.get(f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/"
                       f"Microsoft.Scheduler/jobCollections/coll/jobs/{name}")  # fmt: skip
    assert got.status_code == 200, got.text
    answer = got.json()
    added = {key: answer["properties"].get("status", {}).pop(key, None) for key in ADDED[version]}
    assert answer == JOBS[name]["answers"][version]
    assert all(value is not None for value in added.values()), added  # and they are there


@pytest.mark.parametrize("name", sorted(JOBS))
def test_a_job_read_and_written_back_stores_the_same_json(stored, name: str) -> None:
    record = get_job(stored, SUB, RG, "coll", name)
    put_job(stored, record, etag=record.etag)

    entity = stored.table(TABLE).get_entity(f"{SUB}|{RG}|coll".lower(), name.lower())
    before = JOBS[name]["entity"]
    for column in JSON_COLUMNS:
        assert entity.get(column) == before.get(column), column
    assert entity["State"] == before["State"]
