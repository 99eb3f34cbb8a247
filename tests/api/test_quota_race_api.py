"""`maxJobCount` holds under parallel PUTs: real concurrent HTTP requests against the API
over real Azurite. The count lives in a counter entity changed in the same table transaction
as each job insert and delete."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from scheduler_lib.domain.keys import collection_key
from scheduler_lib.store.jobs import TABLE, count_jobs
from scheduler_lib.store.partition_counter import COUNTER_ROW
from scheduler_lib.store.tables import TableStore
from tests.api.conftest import RG, SUB, api_client, arm_error, job_body, job_path, make_collection

PARALLEL = 50


def _parallel_puts(server, names: list[str]) -> list[httpx.Response]:
    def put(name: str) -> httpx.Response:
        with api_client(server, timeout=60) as http:
            return http.put(job_path(name), json=job_body())

    with ThreadPoolExecutor(max_workers=len(names)) as pool:
        return list(pool.map(put, names))


def _listed(client: httpx.Client) -> list[str]:
    response = client.get(job_path("x").rsplit("/", 1)[0])
    assert response.status_code == 200, response.text
    return sorted(job["name"].rsplit("/", 1)[-1] for job in response.json()["value"])


@pytest.mark.parametrize("already", [0, 3])
def test_parallel_puts_create_exactly_max_job_count(
    client: httpx.Client, server, store: TableStore, already: int
) -> None:
    make_collection(client, quota={"maxJobCount": 10})
    for index in range(already):
        assert client.put(job_path(f"old{index}"), json=job_body()).status_code == 201
    if already:  # a collection stored before the counter existed: it has none
        store.table(TABLE).delete_entity(collection_key(SUB, RG, "coll"), COUNTER_ROW)

    responses = _parallel_puts(server, [f"job{i:02d}" for i in range(PARALLEL)])

    statuses = sorted(r.status_code for r in responses)
    assert statuses == [201] * (10 - already) + [409] * (PARALLEL - 10 + already)
    assert {arm_error(r, 409)["code"] for r in responses if r.status_code == 409} == {
        "QuotaExceeded"
    }
    assert len(_listed(client)) == 10
    assert count_jobs(store, collection_key(SUB, RG, "coll")) == 10


def test_a_delete_frees_a_slot_and_only_one(client: httpx.Client, server) -> None:
    make_collection(client, quota={"maxJobCount": 3})
    for index in range(3):
        assert client.put(job_path(f"j{index}"), json=job_body()).status_code == 201
    assert client.delete(job_path("j0")).status_code == 200

    statuses = sorted(r.status_code for r in _parallel_puts(server, [f"n{i}" for i in range(10)]))

    assert statuses == [201] + [409] * 9
    assert len(_listed(client)) == 3
    assert client.put(job_path("j1"), json=job_body()).status_code == 200  # updates still fine
