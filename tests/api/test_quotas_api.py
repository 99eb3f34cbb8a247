"""Collection quotas enforced on jobs with 409 QuotaExceeded."""

import pytest

from tests.api.conftest import arm_error, job_body, job_path, make_collection


def test_free_holds_five_jobs(client):
    make_collection(client, sku={"name": "Free"})
    for index in range(5):
        assert client.put(job_path(f"j{index}"), json=job_body()).status_code == 201
    error = arm_error(client.put(job_path("j5"), json=job_body()), 409)
    assert error["code"] == "QuotaExceeded" and "5" in error["message"]
    assert client.put(job_path("j0"), json=job_body()).status_code == 200  # updates still fine


def test_max_job_count_override(client):
    make_collection(client, quota={"maxJobCount": 2})
    for index in range(2):
        client.put(job_path(f"j{index}"), json=job_body())
    arm_error(client.put(job_path("j2"), json=job_body()), 409)
    client.patch(
        job_path().rsplit("/jobs/", 1)[0], json={"properties": {"quota": {"maxJobCount": 3}}}
    )
    assert client.put(job_path("j2"), json=job_body()).status_code == 201


@pytest.mark.parametrize(
    ("collection", "recurrence", "status"),
    [
        pytest.param({"sku": {"name": "Free"}}, {"frequency": "Hour"}, 201, id="free-hourly"),
        pytest.param(
            {"sku": {"name": "Free"}},
            {"frequency": "Minute", "interval": 30},
            409,
            id="free-every-30-minutes",
        ),
        pytest.param(
            {"sku": {"name": "Free"}},
            {"frequency": "Day", "schedule": {"minutes": [0, 15, 30, 45]}},
            409,
            id="free-daily-but-every-15-minutes",
        ),
        pytest.param(
            {"sku": {"name": "Standard"}}, {"frequency": "Minute"}, 201, id="standard-every-minute"
        ),
        pytest.param(
            {"quota": {"maxRecurrence": {"frequency": "Hour", "interval": 6}}},
            {"frequency": "Hour", "interval": 3},
            409,
            id="override-every-6-hours",
        ),
        pytest.param(
            {"quota": {"maxRecurrence": {"frequency": "Hour", "interval": 6}}},
            {"frequency": "Day"},
            201,
            id="override-daily-is-fine",
        ),
        pytest.param(
            {"quota": {"maxJobOccurrence": 5}},
            {"frequency": "Day", "count": 6},
            409,
            id="max-job-occurrence",
        ),
    ],
)
def test_recurrence_limits(client, collection, recurrence, status):
    make_collection(client, **collection)
    response = client.put(job_path(), json=job_body(recurrence=recurrence))
    assert response.status_code == status, response.text
    if status == 409:
        assert response.json()["error"]["code"] == "QuotaExceeded"
