"""Jobs_List and Jobs_ListJobHistory: paging past 100, $top/$skip, $filter forms, nextLink."""

import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from scheduler_lib.api import create_app
from scheduler_lib.config import Settings
from scheduler_lib.domain.keys import job_key
from scheduler_lib.store.history import HistoryEntry, add_history
from tests.api.conftest import RG, SUB, arm_error, job_body, job_path, make_collection
from tests.support.api_server import ApiServer, ManualClock, serve

JOBS = job_path().rsplit("/", 1)[0]
NOW = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)


def _walk(
    client: httpx.Client, url: str, params: dict | None = None
) -> tuple[list[str], list[str]]:
    """Every name across pages, following nextLink exactly as given (as the SDK does)."""
    names: list[str] = []
    links: list[str] = []
    response = client.get(url, params=params)
    while True:
        assert response.status_code == 200, response.text
        body = response.json()
        names += [item["name"] for item in body["value"]]
        if body["nextLink"] is None:  # 2016-03-01's last page says so (`dialect`)
            return names, links
        links.append(body["nextLink"])
        # Absolute and self-contained: no client base URL, params or headers added but auth.
        response = httpx.get(body["nextLink"], headers={"Authorization": "Bearer test-key"})


@pytest.fixture(scope="module")
def listing(azurite) -> Iterator[tuple[ApiServer, httpx.Client, list[str]]]:
    """One collection of 123 jobs (every 10th Disabled), shared by the read-only tests of
    this module: creating them through HTTP once keeps the module fast."""
    settings = Settings(
        storage_connection_string=azurite.connection_string,
        api_keys=("test-key",),
        storage_prefix="l" + uuid.uuid4().hex[:12],
    )
    names = [f"job{i:03d}" for i in range(123)]
    with (
        serve(create_app(settings, clock=ManualClock())) as server,
        httpx.Client(
            base_url=server.api_url, headers={"Authorization": "Bearer test-key"}, timeout=30
        ) as http,
    ):
        make_collection(http, sku={"name": "P20Premium"})

        def create(index: int) -> int:
            body = job_body(state="Disabled" if index % 10 == 0 else "Enabled")
            return http.put(job_path(names[index]), json=body).status_code

        with ThreadPoolExecutor(max_workers=4) as pool:
            assert set(pool.map(create, range(len(names)))) == {201}
        yield server, http, names


def test_paging_past_100_jobs_with_absolute_next_links(listing):
    server, client, many_jobs = listing
    names, links = _walk(client, JOBS)
    assert sorted(names) == [f"coll/{n}" for n in many_jobs]  # each once
    assert len(links) == 1
    link = urlsplit(links[0])
    assert f"{link.scheme}://{link.netloc}" == server.base_url
    assert parse_qs(link.query)["api-version"] == ["2016-03-01"]
    names, links = _walk(client, JOBS, {"$top": 25})
    assert len(names) == 123 and len(set(names)) == 123 and len(links) == 4
    assert all(parse_qs(urlsplit(link).query)["$top"] == ["25"] for link in links)


def test_top_and_skip(listing):
    _, client, _ = listing
    page = client.get(JOBS, params={"$top": 5, "$skip": 118}).json()
    assert [j["name"] for j in page["value"]] == [f"coll/job{i}" for i in range(118, 123)]
    assert page["nextLink"] is None  # the last page: no link to an empty one
    page = client.get(JOBS, params={"$top": 3, "$skip": 10}).json()
    assert [j["name"] for j in page["value"]] == ["coll/job010", "coll/job011", "coll/job012"]
    following = httpx.get(page["nextLink"], headers={"Authorization": "Bearer test-key"}).json()
    assert [j["name"] for j in following["value"]] == ["coll/job013", "coll/job014", "coll/job015"]


@pytest.mark.parametrize(
    "expression",
    [
        pytest.param("state eq 'Disabled'", id="quoted"),
        pytest.param("state eq Disabled", id="unquoted"),
        pytest.param("State EQ 'disabled'", id="any-case"),
        pytest.param('state eq "DISABLED"', id="double-quoted"),
    ],
)
def test_filter_forms(listing, expression):
    _, client, _ = listing
    names, _ = _walk(client, JOBS, {"$filter": expression, "$top": 5})
    assert names == [f"coll/job{i:03d}" for i in range(0, 123, 10)]


@pytest.mark.parametrize(
    ("params", "target"),
    [
        pytest.param({"$top": 0}, "$top", id="top-zero"),
        pytest.param({"$top": 101}, "$top", id="top-over-100"),
        pytest.param({"$top": "ten"}, "$top", id="top-not-a-number"),
        pytest.param({"$skip": -1}, "$skip", id="skip-negative"),
        pytest.param({"$filter": "state eq 'Sleeping'"}, "$filter", id="filter-unknown-state"),
        pytest.param({"$filter": "name eq 'x'"}, "$filter", id="filter-other-field"),
        pytest.param({"$filter": "state ne 'Enabled'"}, "$filter", id="filter-other-operator"),
        pytest.param({"$skiptoken": "garbage!"}, "$skiptoken", id="skiptoken-forged"),
    ],
)
def test_bad_list_options(client, params, target):
    make_collection(client)
    assert arm_error(client.get(JOBS, params=params), 400)["target"] == target


def test_list_of_a_missing_collection_is_404(client):
    arm_error(client.get(JOBS), 404)


def test_history_newest_first_with_status_filter_and_paging(client, store):
    make_collection(client)
    client.put(job_path(), json=job_body())
    key = job_key(SUB, RG, "coll", "job1")
    for minute in range(7):
        start = NOW + timedelta(minutes=minute)
        status = "Failed" if minute % 2 else "Completed"
        add_history(
            store,
            HistoryEntry(
                key,
                start,
                start + timedelta(seconds=1),
                start,
                "MainAction",
                status,
                f"attempt {minute}",
                0,
                minute + 1,
            ),
        )
    history = client.get(job_path() + "/history").json()
    first = history["value"][0]
    assert first["type"] == "Microsoft.Scheduler/jobCollections/jobs/history"
    assert first["id"].startswith(client.get(job_path()).json()["id"] + "/history/")
    assert first["properties"] == {
        "startTime": "2026-03-04T09:06:00Z",
        "endTime": "2026-03-04T09:06:01Z",
        "expectedExecutionTime": "2026-03-04T09:06:00Z",
        "actionName": "MainAction",
        "status": "Completed",
        "message": "attempt 6",
        "retryCount": 0,
        "repeatCount": 7,
    }
    _, links = _walk(client, job_path() + "/history", {"$top": 2})
    assert len(links) == 3
    failed = client.get(job_path() + "/history", params={"$filter": "status eq Failed"}).json()
    assert [h["properties"]["message"] for h in failed["value"]] == [
        "attempt 5",
        "attempt 3",
        "attempt 1",
    ]
    assert (
        arm_error(client.get(job_path() + "/history", params={"$filter": "state eq Failed"}), 400)[
            "target"
        ]
        == "$filter"
    )
    arm_error(client.get(job_path("nope") + "/history"), 404)
