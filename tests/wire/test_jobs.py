"""Job bodies into stored definitions, merge patch, size limit, wire output."""

from datetime import UTC, datetime

import pytest

from scheduler_lib.domain import JobDefinition
from scheduler_lib.domain.jobs import JobRecord
from scheduler_lib.errors import ValidationError
from scheduler_lib.wire.jobs import (
    check_size,
    job_to_wire,
    merge_patch,
    normalize_properties,
    split_body,
)

ACTION = {"type": "Http", "request": {"uri": "http://x.y/", "method": "GET"}}


def test_timing_is_canonical_and_occurrence_lower_case():
    definition, state, _ = normalize_properties(
        {
            "startTime": "2026-03-04T09:00:00Z",
            "recurrence": {
                "Frequency": "month",
                "schedule": {
                    "monthlyOccurrences": [{"Day": "friday", "Occurrence": -1}],
                    "hours": 9,
                },
                "timezone": "Europe/London",
            },
            "action": ACTION,
            "state": "disabled",
        }
    )
    assert state == "Disabled"
    assert definition["recurrence"] == {
        "frequency": "Month",
        "schedule": {"monthlyOccurrences": [{"day": "Friday", "occurrence": -1}], "hours": [9]},
        "timeZone": "Europe/London",
    }


@pytest.mark.parametrize(
    ("properties", "field"),
    [
        pytest.param({}, "properties.action", id="action-missing"),
        pytest.param(
            {"action": ACTION, "startTime": "soon"}, "properties.startTime", id="bad-start"
        ),
        pytest.param(
            {"action": ACTION, "recurrence": {"interval": 2}},
            "properties.recurrence.frequency",
            id="frequency-missing",
        ),
        pytest.param(
            {"action": ACTION, "recurrence": {"frequency": "Week", "schedule": {"hours": [24]}}},
            "properties.recurrence.schedule.hours[0]",
            id="hour-out-of-range",
        ),
        pytest.param(
            {"action": ACTION, "recurrence": {"frequency": "Day", "every": 2}},
            "properties.recurrence.every",
            id="unknown-recurrence-key",
        ),
        pytest.param(
            {
                "action": ACTION,
                "recurrence": {
                    "frequency": "Month",
                    "schedule": {
                        "monthlyOccurrences": [{"day": "Monday", "occurrence": 1, "Occurrence": 2}]
                    },
                },
            },
            "properties.recurrence.schedule.monthlyOccurrences[0].Occurrence",
            id="occurrence-given-twice",
        ),
        pytest.param(
            {"action": ACTION, "state": "Completed"}, "properties.state", id="state-final"
        ),
        pytest.param({"action": ACTION, "state": "Paused"}, "properties.state", id="state-unknown"),
        pytest.param({"action": ACTION, "owner": "me"}, "properties.owner", id="unknown-property"),
    ],
)
def test_bad_properties_name_the_field(properties, field):
    with pytest.raises(ValidationError) as err:
        normalize_properties(properties)
    assert err.value.field == field


def test_body_needs_properties_and_ignores_read_only_identity():
    assert split_body({"id": "x", "name": "c/j", "type": "t", "properties": {"a": 1}}) == {"a": 1}
    with pytest.raises(ValidationError) as err:
        split_body({"location": "westus", "properties": {}})
    assert err.value.field == "location"
    with pytest.raises(ValidationError) as err:
        split_body([])
    assert err.value.field == "body"


def test_size_limit_is_16_kb():
    check_size(JobDefinition({"action": {"request": {"body": "x" * 16000}}}))
    with pytest.raises(ValidationError) as err:
        check_size(JobDefinition({"action": {"request": {"body": "x" * 16400}}}))
    assert err.value.field == "properties"


def test_merge_patch_merges_deletes_and_replaces_on_type_change():
    stored = {
        "action": {"type": "Http", "request": {"uri": "u", "method": "GET"}},
        "state": "Enabled",
    }
    assert merge_patch(stored, {"state": "Disabled"})["state"] == "Disabled"
    merged = merge_patch(stored, {"action": {"request": {"method": "POST"}}})
    assert merged["action"]["request"] == {"uri": "u", "method": "POST"}
    assert "startTime" not in merge_patch({**stored, "startTime": "x"}, {"startTime": None})
    replaced = merge_patch(stored, {"action": {"type": "StorageQueue", "queueMessage": {}}})
    assert replaced["action"] == {"type": "StorageQueue", "queueMessage": {}}


def test_wire_output_has_arm_identity_status_and_no_secrets():
    record = JobRecord(
        subscription_id="Sub",
        resource_group="RG",
        collection_name="Coll",
        name="Ping",
        definition=JobDefinition(
            {
                "recurrence": {
                    "frequency": "Month",
                    "schedule": {"monthlyOccurrences": [{"day": "Friday", "occurrence": 1}]},
                },
                "action": {
                    "type": "Http",
                    "request": {
                        "uri": "http://x",
                        "method": "GET",
                        "authentication": {"type": "Basic", "username": "u", "password": "pw"},
                    },
                },
            }
        ),
        created_time=datetime(2026, 1, 1, tzinfo=UTC),
        next_execution_time=datetime(2026, 1, 2, tzinfo=UTC),
    )
    wire = job_to_wire(record, now=datetime(2026, 1, 1, 12, tzinfo=UTC))
    assert wire["id"] == (
        "/subscriptions/Sub/resourceGroups/RG/providers/Microsoft.Scheduler/jobCollections/Coll/jobs/Ping"
    )
    assert wire["name"] == "Coll/Ping"
    assert wire["type"] == "Microsoft.Scheduler/jobCollections/jobs"
    assert "pw" not in str(wire)
    assert wire["properties"]["recurrence"]["schedule"]["monthlyOccurrences"] == [
        {"day": "friday", "occurrence": 1, "Occurrence": 1}  # 2016-03-01 (`dialect`)
    ]
    assert wire["properties"]["status"]["nextExecutionTime"] == "2026-01-02T00:00:00Z"
    assert wire["properties"]["state"] == "enabled"
