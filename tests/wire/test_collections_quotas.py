"""Collection bodies and quota rules (SKU limits, overrides, job checks)."""

from datetime import UTC, datetime, timedelta

import pytest

from scheduler_lib.api.errors import http_status
from scheduler_lib.domain import JobDefinition
from scheduler_lib.domain.collections import CollectionRecord
from scheduler_lib.errors import QuotaExceededError, ValidationError
from scheduler_lib.wire import collections, quotas


def test_collection_defaults_and_any_case_enums():
    location, tags, properties = collections.normalize_body(
        {
            "location": "westus",
            "tags": {"a": "b"},
            "properties": {
                "sku": {"name": "free"},
                "quota": {"maxRecurrence": {"frequency": "hour"}},
            },
        }
    )
    complete = collections.complete(properties)
    assert (location, tags) == ("westus", {"a": "b"})
    assert complete == {
        "sku": {"name": "Free"},
        "state": "Enabled",
        "quota": {"maxRecurrence": {"frequency": "Hour", "interval": 1}},
    }
    assert collections.complete({}) == {"sku": {"name": "Standard"}, "state": "Enabled"}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        pytest.param({"properties": {"sku": {"name": "Gold"}}}, "properties.sku.name", id="sku"),
        pytest.param({"properties": {"state": "Deleted"}}, "properties.state", id="state-system"),
        pytest.param(
            {"properties": {"quota": {"maxJobCount": 0}}},
            "properties.quota.maxJobCount",
            id="count-zero",
        ),
        pytest.param(
            {"properties": {"quota": {"maxJobCount": "5"}}},
            "properties.quota.maxJobCount",
            id="count-string",
        ),
        pytest.param(
            {"properties": {"quota": {"maxRecurrence": {"interval": 1}}}},
            "properties.quota.maxRecurrence.frequency",
            id="recurrence-frequency",
        ),
        pytest.param({"tags": {"a": 1}}, "tags.a", id="tag-not-string"),
        pytest.param({"etag": "x"}, "etag", id="unknown-property"),
    ],
)
def test_bad_collection_bodies(body, field):
    with pytest.raises(ValidationError) as err:
        collections.complete(collections.normalize_body(body)[2])
    assert err.value.field == field


@pytest.mark.parametrize(
    ("sku", "quota", "field"),
    [
        pytest.param("Free", {"maxJobCount": 6}, "properties.quota.maxJobCount", id="free-6-jobs"),
        pytest.param("Standard", {"maxJobCount": 51}, "properties.quota.maxJobCount", id="std-51"),
        pytest.param(
            "Free",
            {"maxRecurrence": {"frequency": "Minute", "interval": 30}},
            "properties.quota.maxRecurrence",
            id="free-every-30-minutes",
        ),
    ],
)
def test_quota_may_not_loosen_the_sku(sku, quota, field):
    with pytest.raises(ValidationError) as err:
        quotas.check_collection_quota(sku, quota)
    assert err.value.field == field


def test_effective_limits_prefer_the_override():
    limits = quotas.effective_limits({"sku": {"name": "P20Premium"}})
    assert (limits.max_job_count, limits.min_gap) == (1000, timedelta(minutes=1))
    limits = quotas.effective_limits(
        {
            "sku": {"name": "Standard"},
            "quota": {"maxJobCount": 3, "maxRecurrence": {"frequency": "Hour", "interval": 2}},
        }
    )
    assert (limits.max_job_count, limits.min_gap) == (3, timedelta(hours=2))
    with pytest.raises(QuotaExceededError):
        quotas.check_job_count(limits, 3)
    quotas.check_job_count(limits, 2)


NO_TIMING = JobDefinition({})


def test_recurrence_is_judged_by_the_smallest_gap():
    limits = quotas.effective_limits({"sku": {"name": "Free"}})
    start = datetime(2026, 1, 1, tzinfo=UTC)
    hourly = [start + timedelta(hours=i) for i in range(5)]
    quotas.check_job_recurrence(limits, NO_TIMING, hourly)
    bunched = [start, start + timedelta(minutes=15), start + timedelta(days=1)]
    with pytest.raises(QuotaExceededError) as err:
        quotas.check_job_recurrence(limits, NO_TIMING, bunched)
    assert http_status(err.value) == 409 and "every 1 hour" in err.value.message
    quotas.check_job_recurrence(limits, NO_TIMING, [start])  # a one-time job never recurs


def _counted(count: int) -> JobDefinition:
    return JobDefinition({"recurrence": {"frequency": "Hour", "count": count}})


def test_max_job_occurrence_caps_count():
    limits = quotas.effective_limits({"quota": {"maxJobOccurrence": 3}})
    quotas.check_job_recurrence(limits, _counted(3), [])
    with pytest.raises(QuotaExceededError):
        quotas.check_job_recurrence(limits, _counted(4), [])


def test_free_collections_cannot_authenticate_outbound():
    definition = JobDefinition({"action": {"request": {"authentication": {"type": "Basic"}}}})
    with pytest.raises(QuotaExceededError):
        quotas.check_sku_features("Free", definition)
    quotas.check_sku_features("Standard", definition)


def test_collection_wire_output():
    record = CollectionRecord("Sub", "RG", "Coll", "westus", {"k": "v"}, {"state": "Enabled"})
    assert collections.collection_to_wire(record) == {
        "id": "/subscriptions/Sub/resourceGroups/RG/providers/Microsoft.Scheduler"
        "/jobCollections/Coll",
        "type": "Microsoft.Scheduler/jobCollections",
        "name": "Coll",
        "location": "westus",
        "tags": {"k": "v"},
        "properties": {"state": "Enabled"},
    }
