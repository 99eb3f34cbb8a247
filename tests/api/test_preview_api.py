"""POST /api/preview: next executions of a schedule, and its validation errors."""

import pytest

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
