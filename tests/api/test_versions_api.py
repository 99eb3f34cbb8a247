"""The api-version rules over real HTTP (docs/extensions.md, "Versions").

2016-03-01 (or no api-version) is Azure Scheduler's surface exactly: an extension property
in its request is the usual 400 naming the field, its responses carry none. 2026-12-01
accepts and returns them. A 2016-03-01 PUT replaces the definition (extensions dropped); its
PATCH leaves the stored extensions alone. `pauseNote` (a job property) stands for every
extension here: they all go through the one catalog (`wire/extension_catalog.py`).
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from openapi_spec_validator import validate

from tests.api.conftest import (
    EXTENSIONS_VERSION,
    api_client,
    arm_error,
    collection_path,
    job_body,
    job_path,
    make_collection,
)

NOTE = "paused for the migration, see TICKET-12"


@pytest.fixture
def coll(client):
    make_collection(client)


@pytest.mark.parametrize("version", ["2016-03-01", None])
def test_the_old_version_refuses_an_extension_property(server, coll, version):
    params = {"api-version": version} if version else {}
    with httpx.Client(
        base_url=server.api_url, headers={"Authorization": "Bearer test-key"}, params=params
    ) as old:
        error = arm_error(old.put(job_path(), json=job_body(pauseNote=NOTE)), 400)
    assert error["target"] == "properties.pauseNote"
    assert "not a known property" in error["message"]


def test_the_new_version_accepts_stores_and_returns_it(client, client_ext, coll):
    created = client_ext.put(job_path(), json=job_body(pauseNote=NOTE))
    assert created.status_code == 201, created.text
    assert created.json()["properties"]["pauseNote"] == NOTE
    assert client_ext.get(job_path()).json()["properties"]["pauseNote"] == NOTE
    # A bad value is a 400 naming it, as for any 2016-03-01 property.
    error = arm_error(client_ext.put(job_path(), json=job_body(pauseNote=7)), 400)
    assert error["target"] == "properties.pauseNote"


def test_the_old_version_returns_todays_bytes(client, client_ext, coll):
    """The same job stored through either version reads the same through 2016-03-01."""
    assert client.put(job_path("plain"), json=job_body()).status_code == 201
    assert client_ext.put(job_path("noted"), json=job_body(pauseNote=NOTE)).status_code == 201
    plain = client.get(job_path("plain")).content
    noted = client.get(job_path("noted")).content
    assert noted == plain.replace(b"plain", b"noted")
    listed = client.get(collection_path() + "/jobs").json()["value"]
    assert all("pauseNote" not in job["properties"] for job in listed)
    listed = client_ext.get(collection_path() + "/jobs").json()["value"]
    assert [j["properties"].get("pauseNote") for j in listed] == [NOTE, None]


def test_an_old_put_replaces_the_definition_as_the_old_api_did(client, client_ext, coll):
    client_ext.put(job_path(), json=job_body(pauseNote=NOTE))
    assert client.put(job_path(), json=job_body()).status_code == 200
    assert "pauseNote" not in client_ext.get(job_path()).json()["properties"]


def test_an_old_patch_leaves_stored_extensions_alone(client, client_ext, coll):
    client_ext.put(job_path(), json=job_body(pauseNote=NOTE))
    patched = client.patch(job_path(), json={"properties": {"state": "Disabled"}})
    assert patched.status_code == 200, patched.text
    assert "pauseNote" not in patched.json()["properties"]  # the old surface
    current = client_ext.get(job_path()).json()["properties"]
    assert current["pauseNote"] == NOTE and current["state"] == "Disabled"
    # ... and cannot set one either.
    error = arm_error(client.patch(job_path(), json={"properties": {"pauseNote": "x"}}), 400)
    assert error["target"] == "properties.pauseNote"
    assert client_ext.get(job_path()).json()["properties"]["pauseNote"] == NOTE


def test_a_new_patch_sets_and_clears_an_extension(client_ext, coll):
    client_ext.put(job_path(), json=job_body())
    patched = client_ext.patch(job_path(), json={"properties": {"pauseNote": NOTE}})
    assert patched.json()["properties"]["pauseNote"] == NOTE
    cleared = client_ext.patch(job_path(), json={"properties": {"pauseNote": None}})
    assert "pauseNote" not in cleared.json()["properties"]


@pytest.mark.parametrize("version", ["2016-03-01", EXTENSIONS_VERSION])
def test_next_links_repeat_the_version_used(server, coll, version):
    with api_client(server, version=version) as http:
        for index in range(3):
            assert http.put(job_path(f"job{index}"), json=job_body()).status_code == 201
        page = http.get(collection_path() + "/jobs", params={"$top": 2}).json()
    assert parse_qs(urlsplit(page["nextLink"]).query)["api-version"] == [version]


@pytest.mark.parametrize("version", ["2015-08-01", "2026-12-02", ""])
def test_any_other_version_is_refused_naming_both(server, version):
    response = httpx.get(
        server.api_url + collection_path(),
        params={"api-version": version},
        headers={"Authorization": "Bearer test-key"},
    )
    error = arm_error(response, 400)
    assert error["target"] == "api-version"
    assert "2016-03-01" in error["message"] and EXTENSIONS_VERSION in error["message"]


def test_collections_speak_both_versions(client, client_ext):
    """Both versions serve the same collection, each written as that version writes it
    (`wire/dialect.py`): 2016-03-01 leaves out the tags nobody set."""
    make_collection(client)
    new = client_ext.get(collection_path()).json()
    assert new.pop("tags") == {}
    assert new == client.get(collection_path()).json()


def test_the_new_openapi_document_is_served_beside_the_old_and_validates(server):
    old = httpx.get(server.api_url + "/openapi.json").json()  # no key: documentation
    new = httpx.get(server.api_url + f"/openapi-{EXTENSIONS_VERSION}.json").json()
    validate(old)
    validate(new)
    assert new["info"]["version"] == EXTENSIONS_VERSION
    assert "pauseNote" in new["components"]["schemas"]["JobProperties"]["properties"]
    assert "pauseNote" not in old["components"]["schemas"]["JobProperties"]["properties"]
    assert set(old["paths"]) <= set(new["paths"])  # plus the routes of 2026-12-01 alone
    page = httpx.get(server.api_url + "/docs").text
    assert "/api/openapi.json" in page and f"/api/openapi-{EXTENSIONS_VERSION}.json" in page
