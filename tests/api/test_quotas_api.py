"""Collection quotas enforced on jobs with 409 QuotaExceeded."""

from datetime import timedelta

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


HOURLY = {"quota": {"maxRecurrence": {"frequency": "Hour", "interval": 1}}}


@pytest.mark.parametrize("minutes_before", [59, 30, 1, 0])
def test_a_daily_job_is_daily_whatever_the_time_of_creation(client, clock, minutes_before):
    """The immediate first run of a job without startTime is not part of its rule: created
    a minute before its daily hour, the job is still once a day (issue 11)."""
    make_collection(client, **HOURLY)
    hour = (clock.now.hour + 1) % 24
    clock.now = clock.now.replace(minute=0) + timedelta(hours=1, minutes=-minutes_before)
    recurrence = {"frequency": "Day", "schedule": {"hours": [hour], "minutes": [0]}}
    response = client.put(job_path(), json=job_body(recurrence=recurrence))
    assert response.status_code == 201, response.text


@pytest.mark.parametrize(
    "recurrence",
    [
        {"frequency": "Day", "schedule": {"minutes": [0, 30]}},
        {"frequency": "Day", "schedule": {"hours": [10], "minutes": [0, 30]}},
        {"frequency": "Hour", "schedule": {"minutes": [0, 30]}},
        {"frequency": "Minute", "interval": 30},
        {
            "frequency": "Week",
            "schedule": {"weekDays": ["Monday"], "hours": [5, 6], "minutes": [0, 59]},
        },
        {"frequency": "Day", "schedule": {"minutes": [0, 30]}, "count": 2},
    ],
)
@pytest.mark.parametrize("start", [None, "2026-03-04T09:59:00Z", "2020-01-01T00:00:00Z"])
def test_a_rule_running_more_often_than_hourly_is_refused_at_any_time(client, recurrence, start):
    make_collection(client, **HOURLY)
    body = job_body(recurrence=recurrence, **({"startTime": start} if start else {}))
    error = arm_error(client.put(job_path(), json=body), 409)
    assert error["code"] == "QuotaExceeded"


@pytest.mark.parametrize(
    "body",
    [
        {
            "recurrence": {
                "frequency": "Day",
                "schedule": {"hours": [1, 2, 3]},
                "timeZone": "Eastern Standard Time",
            },
            "startTime": "2026-03-01T00:00:00",
        },
        {"recurrence": {"frequency": "Minute", "interval": 30, "count": 1}},
        {
            "recurrence": {
                "frequency": "Hour",
                "schedule": {"minutes": [0, 30]},
                "endTime": "2026-03-04T09:10:00Z",
            }
        },
    ],
    ids=["hourly-wall-clock-across-spring-forward", "count-1-never-recurs", "ends-after-one-run"],
)
def test_what_never_runs_twice_within_the_limit_is_accepted(client, body):
    make_collection(client, **HOURLY)
    response = client.put(job_path(), json=job_body(**body))
    assert response.status_code == 201, response.text


def test_a_monthly_job_fits_a_monthly_quota_even_over_february(client):
    """A month is judged by its shortest length (28 days), else no monthly job would fit."""
    make_collection(client, quota={"maxRecurrence": {"frequency": "Month", "interval": 1}})
    body = job_body(recurrence={"frequency": "Month", "schedule": {"monthDays": [1]}})
    assert client.put(job_path(), json=body).status_code == 201
    weekly = job_body(recurrence={"frequency": "Week", "interval": 2})
    assert arm_error(client.put(job_path("j2"), json=weekly), 409)["code"] == "QuotaExceeded"


def test_a_daily_job_fits_a_daily_quota_across_a_dst_change(client):
    """Gaps are measured on the wall clock: 02:30 daily in New York is 23 elapsed hours
    across the spring-forward night, but still once a day."""
    make_collection(client, quota={"maxRecurrence": {"frequency": "Day", "interval": 1}})
    recurrence = {
        "frequency": "Day",
        "schedule": {"hours": [2], "minutes": [30]},
        "timeZone": "Eastern Standard Time",
    }
    body = job_body(startTime="2026-03-01T00:00:00", recurrence=recurrence)
    assert client.put(job_path(), json=body).status_code == 201
