"""Size limits of what a user stores, over real HTTP against Azurite: every field whose
size the user controls is bounded at PUT and PATCH with a 400 naming it, before Table
storage (64 KiB per string property, 1 MiB per entity) could refuse it with a 500."""

import pytest

from tests.api.conftest import arm_error, collection_path, job_body, job_path, make_collection


def _put_tags(client, tags, *, method="put"):
    return client.request(
        method.upper(), collection_path(), json={"location": "westus", "tags": tags}
    )


@pytest.mark.parametrize("method", ["put", "patch"])
def test_more_than_50_tags_is_a_400(client, method):
    make_collection(client)
    error = arm_error(_put_tags(client, {f"t{i}": "v" for i in range(51)}, method=method), 400)
    assert error["target"] == "tags"
    assert "50" in error["message"]


@pytest.mark.parametrize("method", ["put", "patch"])
def test_tag_name_over_512_characters_is_a_400(client, method):
    make_collection(client)
    assert _put_tags(client, {"n" * 512: "v"}, method=method).is_success
    error = arm_error(_put_tags(client, {"n" * 513: "v"}, method=method), 400)
    assert error["target"] == "tags"
    assert "512" in error["message"]


@pytest.mark.parametrize("method", ["put", "patch"])
def test_tag_value_over_256_characters_is_a_400(client, method):
    make_collection(client)
    assert _put_tags(client, {"env": "v" * 256}, method=method).is_success
    error = arm_error(_put_tags(client, {"env": "v" * 257}, method=method), 400)
    assert error["target"] == "tags.env"
    assert "256" in error["message"]


def test_empty_tag_name_is_a_400(client):
    error = arm_error(_put_tags(client, {"": "v"}), 400)
    assert error["target"] == "tags"


def test_tags_at_every_limit_are_stored_and_read_back(client):
    """50 tags of 512-character names and 256-character values: the most ARM allows, and
    within Table storage's property limit."""
    tags = {f"{i:02d}".ljust(512, "n"): "v" * 256 for i in range(50)}
    stored = _put_tags(client, tags)
    assert stored.status_code == 201, stored.text
    assert client.get(collection_path()).json()["tags"] == tags


def test_non_ascii_tags_beyond_one_table_property_are_stored_and_read_back(client):
    """Stored as escaped JSON, these tags are ~140,000 characters: more than one Table
    storage property holds (64 KiB of UTF-16), so the store splits them."""
    tags = {f"{i:02d}".ljust(200, "é"): "€" * 256 for i in range(50)}
    stored = _put_tags(client, tags)
    assert stored.status_code == 201, stored.text
    assert client.get(collection_path()).json()["tags"] == tags
    fewer = _put_tags(client, {"env": "prod"})  # a replace leaves no part of the old tags
    assert fewer.status_code == 201 and fewer.json()["tags"] == {"env": "prod"}  # 2016: 201
    assert client.get(collection_path()).json()["tags"] == {"env": "prod"}


@pytest.mark.parametrize("method", ["put", "patch"])
def test_tags_over_64_kib_of_json_are_a_400(client, method):
    """Within ARM's per-tag limits, but 3-byte characters make 115 KB of JSON in all."""
    make_collection(client)
    tags = {f"{i:02d}".ljust(512, "€"): "€" * 256 for i in range(50)}
    error = arm_error(_put_tags(client, tags, method=method), 400)
    # The request body is over the API's 64 KiB too, which is checked first; the tag rule
    # on its own is tested in tests/wire/test_collections_tags.py.
    assert error["target"] in ("body", "tags")
    assert "tags" not in client.get(collection_path()).json()  # nothing half-written


def test_job_over_16_kb_is_a_400_for_put_and_patch(client):
    """The documented 16 KB limit on a job holds however the job got its content."""
    make_collection(client)
    small = job_body()
    assert client.put(job_path(), json=small).status_code == 201
    big_header = {"x-big": "é" * 3000}  # 3000 Latin-1 characters, 18000 bytes stored escaped
    error = arm_error(
        client.patch(
            job_path(), json={"properties": {"action": {"request": {"headers": big_header}}}}
        ),
        400,
    )
    assert error["target"] == "properties"
    error = arm_error(
        client.put(
            job_path("job2"),
            json=job_body(
                action={
                    "type": "Http",
                    "request": {
                        "uri": "http://example.com/",
                        "method": "GET",
                        "headers": big_header,
                    },
                }
            ),
        ),
        400,
    )
    assert error["target"] == "properties"
