"""The main flows through the real `azure-mgmt-scheduler` SDK pointed at our API.

The SDK refuses bearer tokens over plain http; `PlainHttpBearerPolicy` lifts only that
check (the test server has no TLS), everything else is the SDK's own pipeline.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from azure.core.credentials import AccessToken
from azure.core.exceptions import (
    DeserializationError,
    HttpResponseError,
    ResourceExistsError,
    ResourceNotFoundError,
)
from azure.core.pipeline.policies import BearerTokenCredentialPolicy
from azure.mgmt.scheduler import SchedulerManagementClient
from azure.mgmt.scheduler import models as m

from scheduler_lib.store.jobs import get_job
from tests.api.conftest import RG, SUB


class StaticKeyCredential:
    """A TokenCredential whose token is an API key."""

    def __init__(self, key: str) -> None:
        self.key = key

    def get_token(self, *scopes: str, **kwargs: object) -> AccessToken:
        return AccessToken(self.key, int(time.time()) + 3600)


class PlainHttpBearerPolicy(BearerTokenCredentialPolicy):
    def on_request(self, request):  # type: ignore[no-untyped-def]
        request.context.options["enforce_https"] = False
        return super().on_request(request)


@pytest.fixture
def sdk(server) -> Iterator[SchedulerManagementClient]:
    credential = StaticKeyCredential("test-key")
    client = SchedulerManagementClient(
        credential,
        SUB,
        base_url=server.api_url,
        authentication_policy=PlainHttpBearerPolicy(credential, "scope"),
        polling_interval=0,
        retry_total=0,
    )
    with client:
        yield client


def _http_job(password: str | None = "sdk-secret") -> m.JobDefinition:
    return m.JobDefinition(
        properties=m.JobProperties(
            start_time=datetime(2026, 3, 4, 9, 0, tzinfo=UTC),
            action=m.JobAction(
                type="Http",
                request=m.HttpRequest(
                    uri="http://example.com/hook",
                    method="POST",
                    body="hello",
                    headers={"X-Test": "1"},
                    authentication=m.BasicAuthentication(username="sdk", password=password),
                ),
                retry_policy=m.RetryPolicy(
                    retry_type="Fixed", retry_interval=timedelta(minutes=2), retry_count=3
                ),
            ),
            recurrence=m.JobRecurrence(
                frequency="Month",
                interval=1,
                schedule=m.JobRecurrenceSchedule(
                    monthly_occurrences=[
                        m.JobRecurrenceScheduleMonthlyOccurrence(day="Friday", occurrence=-1)
                    ],
                    hours=[9],
                    minutes=[30],
                ),
            ),
        )
    )


def _collection(sku: str = "Standard") -> m.JobCollectionDefinition:
    return m.JobCollectionDefinition(
        location="westus",
        properties=m.JobCollectionProperties(sku=m.Sku(name=sku)),
    )


def test_collections_through_the_sdk(sdk):
    created = sdk.job_collections.create_or_update(RG, "sdkcoll", _collection())
    assert created.name == "sdkcoll" and created.properties.sku.name == "Standard"
    assert created.type == "Microsoft.Scheduler/jobCollections"
    patched = sdk.job_collections.patch(
        RG, "sdkcoll", m.JobCollectionDefinition(tags={"team": "a"})
    )
    assert patched.tags == {"team": "a"} and patched.location == "westus"
    sdk.job_collections.begin_disable(RG, "sdkcoll").result()
    assert sdk.job_collections.get(RG, "sdkcoll").properties.state == "Disabled"
    sdk.job_collections.begin_enable(RG, "sdkcoll").result()
    assert sdk.job_collections.get(RG, "sdkcoll").properties.state == "Enabled"
    assert [c.name for c in sdk.job_collections.list_by_resource_group(RG)] == ["sdkcoll"]
    assert [c.name for c in sdk.job_collections.list_by_subscription()] == ["sdkcoll"]
    sdk.job_collections.begin_delete(RG, "sdkcoll").result()
    with pytest.raises(ResourceNotFoundError):
        sdk.job_collections.get(RG, "sdkcoll")


def test_jobs_through_the_sdk(sdk, store):
    sdk.job_collections.create_or_update(RG, "sdkcoll", _collection())
    job = sdk.jobs.create_or_update(RG, "sdkcoll", "hook", _http_job())
    assert job.name == "sdkcoll/hook" and job.type == "Microsoft.Scheduler/jobCollections/jobs"
    # The SDK's models type enums as plain `str`: it passes 2016-03-01's camelCased values
    # through as the service wrote them (they equal no `m.JobState` member) and sends them
    # back as they are, which the API reads case-insensitively.
    assert job.properties.state == "enabled"
    assert job.properties.action.request.authentication.password is None
    assert job.properties.action.retry_policy.retry_interval == timedelta(minutes=2)
    assert job.properties.action.retry_policy.retry_type == "fixed"
    occurrence = job.properties.recurrence.schedule.monthly_occurrences[0]
    assert (occurrence.day, occurrence.occurrence) == ("friday", -1)  # read as `Occurrence`
    # 2026-03-27 is the last Friday of March 2026 (the test clock is 2026-03-04 09:00Z).
    assert job.properties.status.next_execution_time.isoformat() == "2026-03-27T09:30:00+00:00"

    # The SDK's GET-modify-PUT: the stripped password survives.
    read = sdk.jobs.get(RG, "sdkcoll", "hook")
    read.properties.action.request.body = "changed"
    updated = sdk.jobs.create_or_update(RG, "sdkcoll", "hook", read)
    assert updated.properties.action.request.body == "changed"
    stored = get_job(store, SUB, RG, "sdkcoll", "hook").definition.document
    assert stored["action"]["request"]["authentication"]["password"] == "sdk-secret"

    disabled = sdk.jobs.patch(
        RG, "sdkcoll", "hook", m.JobDefinition(properties=m.JobProperties(state="Disabled"))
    )
    assert disabled.properties.state == "disabled"
    for name in ("a", "b", "c"):
        sdk.jobs.create_or_update(RG, "sdkcoll", name, _http_job())
    names = [j.name for j in sdk.jobs.list(RG, "sdkcoll", top=2)]  # follows nextLink
    assert sorted(names) == ["sdkcoll/a", "sdkcoll/b", "sdkcoll/c", "sdkcoll/hook"]
    only_disabled = sdk.jobs.list(RG, "sdkcoll", filter="state eq 'Disabled'")
    assert [j.name for j in only_disabled] == ["sdkcoll/hook"]

    sdk.jobs.run(RG, "sdkcoll", "hook")
    assert list(sdk.jobs.list_job_history(RG, "sdkcoll", "hook", filter="status eq Failed")) == []
    sdk.jobs.delete(RG, "sdkcoll", "hook")
    with pytest.raises(ResourceNotFoundError):
        sdk.jobs.get(RG, "sdkcoll", "hook")


def _every_field_job() -> m.JobDefinition:
    """A job with a value in every field the SDK models, enums in the spec's spelling."""
    job = _http_job()
    job.properties.state = "Enabled"
    job.properties.recurrence.count = 100
    job.properties.recurrence.end_time = datetime(2027, 1, 1, tzinfo=UTC)
    job.properties.action.error_action = m.JobErrorAction(
        type="ServiceBusQueue",
        service_bus_queue_message=m.ServiceBusQueueMessage(
            queue_name="q1",
            namespace="contoso-bus",
            transport_type="NetMessaging",
            authentication=m.ServiceBusAuthentication(
                type="SharedAccessKey", sas_key_name="k", sas_key="sb-secret"
            ),
            message="failed",
            brokered_message_properties=m.ServiceBusBrokeredMessageProperties(
                time_to_live=timedelta(hours=1), label="scheduler"
            ),
            custom_message_properties={"app": "tests"},
        ),
        retry_policy=m.RetryPolicy(retry_type="None"),
    )
    return job


def test_the_sdk_round_trips_every_field(sdk, store):
    """GET, then PUT back what was read (the SDK's GET-modify-PUT): the 2016-03-01 spelling
    the SDK passes through (camelCased enums, `occurrence`, `certificateExpiration`) reads
    back as the same job, every field kept (secrets carried over, as they are never read)."""
    sdk.job_collections.create_or_update(RG, "sdkcoll", _collection())
    sdk.jobs.create_or_update(RG, "sdkcoll", "hook", _every_field_job())
    before = get_job(store, SUB, RG, "sdkcoll", "hook")
    read = sdk.jobs.get(RG, "sdkcoll", "hook")
    assert read.properties.action.error_action.service_bus_queue_message.transport_type == (
        "netMessaging"
    )
    sdk.jobs.create_or_update(RG, "sdkcoll", "hook", read)
    after = get_job(store, SUB, RG, "sdkcoll", "hook")
    assert after.definition == before.definition
    assert (after.state, after.original_form) == (before.state, before.original_form)


def test_the_sdk_cannot_read_a_timespan_as_azure_answered_it(sdk, client):
    """A job whose retryInterval the .NET SDK sent as a TimeSpan is answered with it in
    2016-03-01, as Azure Scheduler did; the Python SDK's duration type reads ISO 8601 only,
    so it cannot read that job (it could not against Azure either). Its own jobs, sent in
    ISO 8601, read back; 2026-12-01 answers ISO 8601 for every job."""
    sdk.job_collections.create_or_update(RG, "sdkcoll", _collection())
    body = _http_job().serialize()
    body["properties"]["action"]["retryPolicy"]["retryInterval"] = "00:02:00"
    path = f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler"
    assert client.put(f"{path}/jobCollections/sdkcoll/jobs/net", json=body).status_code == 201
    with pytest.raises(DeserializationError):
        sdk.jobs.get(RG, "sdkcoll", "net")


def test_sdk_sees_arm_errors(sdk):
    sdk.job_collections.create_or_update(RG, "free", _collection("Free"))
    with pytest.raises(ResourceExistsError) as conflict:  # the SDK maps 409 to this
        sdk.jobs.create_or_update(RG, "free", "auth", _http_job())
    assert conflict.value.error.code == "QuotaExceeded"
    bad = _http_job()
    bad.properties.recurrence.interval = 0
    with pytest.raises(HttpResponseError) as invalid:
        sdk.job_collections.create_or_update(RG, "std", _collection())
        sdk.jobs.create_or_update(RG, "std", "bad", bad)
    assert invalid.value.status_code == 400
    assert invalid.value.error.target == "properties.recurrence.interval"
    with pytest.raises(ResourceNotFoundError):
        sdk.jobs.get(RG, "std", "missing")
