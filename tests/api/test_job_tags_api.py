"""Job tags (2026-12-01 `properties.tags`) over real HTTP and Azurite: stored and returned
by the new version only, refused by 2016-03-01, ARM's limits as 400s naming the field, kept
by a PATCH of another field and merge-patched by name; Jobs_List filtered by ARM's
`tagName`/`tagValue`, paged exactly across the store's pages."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.api.conftest import arm_error, job_body, job_path, make_collection
from tests.api.test_lists_api import JOBS

RECURRING = {"startTime": "2026-03-04T10:00:00Z", "recurrence": {"frequency": "Hour"}}


def _walk(client: httpx.Client, params: dict[str, object]) -> list[str]:
    """Every name across the pages, following each nextLink as given (2026-12-01 leaves it
    out on the last page)."""
    response = client.get(JOBS, params=params)
    names: list[str] = []
    while True:
        assert response.status_code == 200, response.text
        body = response.json()
        names += [item["name"] for item in body["value"]]
        if not body.get("nextLink"):
            return names
        response = httpx.get(body["nextLink"], headers={"Authorization": "Bearer test-key"})


def test_tags_are_stored_and_returned_by_the_new_version_only(client, client_ext):
    make_collection(client)
    created = client_ext.put(job_path(), json=job_body(**RECURRING, tags={"env": "prod"}))
    assert created.status_code == 201, created.text
    assert created.json()["properties"]["tags"] == {"env": "prod"}
    assert "tags" not in client.get(job_path()).json()["properties"]
    error = arm_error(client.put(job_path("old"), json=job_body(tags={"env": "prod"})), 400)
    assert error["target"] == "properties.tags"
    # A PATCH of another field keeps them; a tag set to null goes, one added joins.
    patched = client_ext.patch(job_path(), json={"properties": {"state": "Disabled"}})
    assert patched.json()["properties"]["tags"] == {"env": "prod"}
    merged = client_ext.patch(job_path(), json={"properties": {"tags": {"env": None, "t": "1"}}})
    assert merged.json()["properties"]["tags"] == {"t": "1"}


@pytest.mark.parametrize(
    "tags, target",
    [
        ({f"t{i}": "" for i in range(51)}, "properties.tags"),
        ({"n" * 513: "v"}, "properties.tags"),
        ({"": "v"}, "properties.tags"),
        ({"env": "v" * 257}, "properties.tags.env"),
        ({"env": 1}, "properties.tags.env"),
        (["env"], "properties.tags"),
    ],
)
def test_arm_tag_limits_are_400s_naming_the_field(client_ext, tags, target):
    make_collection(client_ext)
    error = arm_error(client_ext.put(job_path(), json=job_body(tags=tags)), 400)
    assert error["target"] == target, error


@pytest.fixture
def tagged(client_ext) -> httpx.Client:
    """30 jobs; every 7th (job00, job07, ...) tagged env=prod, every 3rd env=dev."""
    make_collection(client_ext)

    def create(index: int) -> int:
        tags = {"env": "prod"} if index % 7 == 0 else {"env": "dev"} if index % 3 == 0 else {}
        body = job_body(**RECURRING, tags=tags, state="Disabled" if index % 2 else "Enabled")
        return client_ext.put(job_path(f"job{index:02d}"), json=body).status_code

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert set(pool.map(create, range(30))) == {201}
    return client_ext


def test_the_list_filters_by_tag_and_pages_exactly(tagged):
    prod = [f"coll/job{i:02d}" for i in range(0, 30, 7)]
    for params in (
        {"$filter": "tagName eq 'env' and tagValue eq 'prod'"},
        {"$filter": "tagname eq 'ENV' and tagvalue eq 'prod'", "$top": 2},
        {"$filter": "tagValue eq 'prod' and tagName eq 'env'", "$top": 1},
    ):
        assert _walk(tagged, params) == prod, params
    page = tagged.get(JOBS, params={"$filter": "tagName eq 'env'", "$top": 3, "$skip": 2})
    assert [j["name"] for j in page.json()["value"]] == ["coll/job06", "coll/job07", "coll/job09"]
    enabled_prod = "state eq 'Enabled' and tagName eq 'env' and tagValue eq 'prod'"
    assert _walk(tagged, {"$filter": enabled_prod}) == ["coll/job00", "coll/job14", "coll/job28"]
    quoted = tagged.get(JOBS, params={"$filter": "tagName eq 'it''s'"})
    assert quoted.status_code == 200 and quoted.json()["value"] == []


def test_the_old_version_keeps_its_one_filter(client, client_ext):
    make_collection(client)
    error = arm_error(client.get(JOBS, params={"$filter": "tagName eq 'env'"}), 400)
    assert error["target"] == "$filter" and error["message"].endswith("can only filter on state")
    both = "state eq 'Enabled' and state eq 'Disabled'"
    error = arm_error(client_ext.get(JOBS, params={"$filter": both}), 400)
    assert error["target"] == "$filter" and "twice" in error["message"]
    error = arm_error(client_ext.get(JOBS, params={"$filter": "tagValue eq 'x'"}), 400)
    assert "needs tagName" in error["message"]
