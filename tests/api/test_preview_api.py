"""POST /api/preview: next executions of a schedule, and its validation errors."""

from datetime import UTC, datetime

import pytest

from scheduler_lib.schedule.preview import preview_table
from tests.api.conftest import arm_error


def test_preview_lists_the_next_executions(client):
    response = client.post(
        "/preview",
        json={
            "startTime": "2026-03-04T09:00:00Z",
            "recurrence": {
                "frequency": "week",
                "interval": 2,
                "schedule": {"weekDays": ["tuesday", "Thursday"], "hours": [8], "minutes": [0]},
            },
            "count": 4,
        },
    )
    assert response.status_code == 200
    assert response.json() == {
        "executions": [
            "2026-03-05T08:00:00Z",
            "2026-03-17T08:00:00Z",
            "2026-03-19T08:00:00Z",
            "2026-03-31T08:00:00Z",
        ],
        "errors": [],
    }


def test_preview_defaults_to_ten_from_the_clock(client):
    body = client.post("/preview", json={"recurrence": {"frequency": "Hour"}}).json()
    assert len(body["executions"]) == 10
    assert body["executions"][0] == "2026-03-04T09:00:00Z"  # the test clock
    assert body["executions"][1] == "2026-03-04T10:00:00Z"


def test_preview_with_an_explicit_now_and_a_short_schedule(client):
    body = client.post(
        "/preview",
        json={"recurrence": {"frequency": "Day", "count": 3}, "now": "2030-01-01T12:00:00Z"},
    ).json()
    assert body["executions"] == [
        "2030-01-01T12:00:00Z",
        "2030-01-02T12:00:00Z",
        "2030-01-03T12:00:00Z",
    ]


def test_preview_reports_schedule_errors(client):
    body = client.post(
        "/preview", json={"recurrence": {"frequency": "Day", "schedule": {"weekDays": ["Monday"]}}}
    ).json()
    assert body["executions"] == []
    assert body["errors"][0]["target"] == "recurrence.schedule.weekDays"
    assert body["errors"][0]["code"] == "BadRequest"


@pytest.mark.parametrize(
    ("body", "target"),
    [
        pytest.param({"count": 0}, "count", id="count-zero"),
        pytest.param({"count": 1001}, "count", id="count-over-1000"),
        pytest.param({"now": "yesterday"}, "now", id="now-not-a-date"),
        pytest.param({"action": {}}, "action", id="unknown-property"),
    ],
)
def test_bad_preview_requests_are_400(client, body, target):
    assert arm_error(client.post("/preview", json=body), 400)["target"] == target


DAILY_4 = {
    "startTime": "2026-03-06T09:30:00",
    "recurrence": {"frequency": "Day", "timeZone": "Eastern Standard Time", "count": 4},
}


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"properties": DAILY_4}, id="properties"),
        pytest.param(
            {
                "id": "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler"
                "/jobCollections/c/jobs/daily",
                "name": "c/daily",
                "type": "Microsoft.Scheduler/jobCollections/jobs",
                "properties": {
                    **DAILY_4,
                    "action": {"type": "Http", "request": {"uri": "https://x/", "method": "GET"}},
                    "state": "Enabled",
                    "status": {"executionCount": 0},
                },
            },
            id="a-whole-job-as-get-returns-it",
        ),
        pytest.param(DAILY_4, id="bare"),
    ],
)
def test_preview_takes_the_job_json_the_cli_takes_and_says_why_it_ends(client, body):
    """Same input, same answer as `python -m scheduler_lib preview` (its last line)."""
    answer = client.post("/preview", json={**body, "now": "2026-03-01T00:00:00Z"}).json()
    assert answer["executions"] == [
        f"2026-03-{day:02}T{hour}:30:00Z" for day, hour in ((6, 14), (7, 14), (8, 13), (9, 13))
    ]
    assert answer["endReason"] == "no more: recurrence.count is 4"
    table = preview_table(DAILY_4, now=datetime(2026, 3, 1, tzinfo=UTC))
    assert table.splitlines()[-1] == f"({answer['endReason']})"


@pytest.mark.parametrize(
    ("job", "reason"),
    [
        ({"startTime": "2026-01-01T00:00:00Z",
          "recurrence": {"frequency": "Day", "endTime": "2026-02-01T00:00:00Z"}},
         "no more: recurrence.endTime is 2026-02-01 00:00:00Z"),
        ({"startTime": "2026-04-01T00:00:00Z"}, "no more: without a recurrence the job runs once"),
    ],
)  # fmt: skip
def test_preview_says_why_no_run_is_left(client, job, reason):
    answer = client.post("/preview", json={"properties": job, "now": "2026-03-01T00:00:00Z"})
    assert answer.json()["endReason"] == reason
    full = client.post("/preview", json={"recurrence": {"frequency": "Day"}, "count": 3}).json()
    assert "endReason" not in full


def test_preview_errors_of_a_whole_job_name_the_property(client):
    body = {"properties": {"recurrence": {"frequency": "Day", "schedule": {"weekDays": ["x"]}}}}
    answer = client.post("/preview", json=body).json()
    assert answer["errors"][0]["target"] == "properties.recurrence.schedule.weekDays"
    bad = arm_error(client.post("/preview", json={"properties": {"colour": "red"}}), 400)
    assert bad["target"] == "properties.colour"


@pytest.mark.parametrize(
    "now",
    ["0001-01-01T00:00:00+14:00", "9999-12-31T23:00:00-14:00", "0001-01-01T05:00:00+14:00"],
)
def test_a_now_outside_the_calendar_in_utc_is_400_naming_it(client, now):
    error = arm_error(client.post("/preview", json={"now": now}), 400)
    assert error["target"] == "now"


def test_openapi_documents_every_route(client):
    document = client.get("/openapi.json").json()
    operations = {
        operation["operationId"]
        for path in document["paths"].values()
        for operation in path.values()
    }
    expected = {
        "JobCollections_ListBySubscription",
        "JobCollections_ListByResourceGroup",
        "JobCollections_Get",
        "JobCollections_CreateOrUpdate",
        "JobCollections_Patch",
        "JobCollections_Delete",
        "JobCollections_Enable",
        "JobCollections_Disable",
        "Jobs_Get",
        "Jobs_CreateOrUpdate",
        "Jobs_Patch",
        "Jobs_Delete",
        "Jobs_Run",
        "Jobs_List",
        "Jobs_ListJobHistory",
        "Preview",
    }
    assert expected <= operations
    assert "JobDefinition" in document["components"]["schemas"]
    docs = client.get("/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()
