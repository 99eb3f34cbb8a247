"""ETags and If-Match on jobs and collections; concurrent PATCHes lose nothing."""

from concurrent.futures import ThreadPoolExecutor

import httpx

from tests.api.conftest import arm_error, collection_path, job_body, job_path, make_collection


def test_if_match_on_jobs(client):
    make_collection(client)
    etag = client.put(job_path(), json=job_body()).headers["etag"]
    stale = {"If-Match": etag}
    updated = client.patch(job_path(), json={"properties": {"state": "Disabled"}}, headers=stale)
    assert updated.status_code == 200 and updated.headers["etag"] != etag
    for response in (
        client.patch(job_path(), json={"properties": {"state": "Enabled"}}, headers=stale),
        client.put(job_path(), json=job_body(), headers=stale),
        client.delete(job_path(), headers=stale),
    ):
        assert arm_error(response, 412)["code"] == "PreconditionFailed"
    fresh = {"If-Match": updated.headers["etag"]}
    assert client.put(job_path(), json=job_body(), headers=fresh).status_code == 200
    assert client.put(job_path(), json=job_body(), headers={"If-Match": "*"}).status_code == 200
    arm_error(client.put(job_path("new"), json=job_body(), headers={"If-Match": "*"}), 412)
    current = client.get(job_path()).headers["etag"]
    assert client.delete(job_path(), headers={"If-Match": current}).status_code == 200


def test_if_match_on_collections(client):
    etag = make_collection(client) and client.get(collection_path()).headers["etag"]
    assert (
        client.patch(
            collection_path(), json={"tags": {"a": "1"}}, headers={"If-Match": etag}
        ).status_code
        == 200
    )
    arm_error(client.patch(collection_path(), json={"tags": {}}, headers={"If-Match": etag}), 412)
    arm_error(client.post(collection_path() + "/disable", headers={"If-Match": etag}), 412)
    arm_error(client.delete(collection_path(), headers={"If-Match": etag}), 412)
    assert client.get(collection_path()).status_code == 200


def test_concurrent_patches_never_lose_an_update(client, server):
    make_collection(client)
    client.put(job_path(), json=job_body())
    names = [f"X-H{i}" for i in range(8)]

    def patch(name: str) -> int:
        with httpx.Client(
            base_url=server.api_url, headers={"Authorization": "Bearer test-key"}, timeout=30
        ) as http:
            body = {"properties": {"action": {"request": {"headers": {name: "1"}}}}}
            return http.patch(job_path(), json=body).status_code

    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(patch, names))
    assert statuses == [200] * len(names)
    headers = client.get(job_path()).json()["properties"]["action"]["request"]["headers"]
    assert sorted(headers) == sorted(names)
