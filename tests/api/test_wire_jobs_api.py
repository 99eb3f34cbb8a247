"""How job answers look in each api-version (`wire/dialect.py`), over real HTTP.

Request bodies have the shapes the SDKs send: the .NET SDK 2.x (TimeSpan retry intervals,
PascalCase enums, `Occurrence`), the Python SDK (ISO 8601 durations, `Occurrence`). The
2016-03-01 answers are what Azure Scheduler's service answered in its recorded sessions;
the 2026-12-01 ones the canonical form (docs/extensions.md, "How answers are written").
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

import pytest

from scheduler_lib.domain import JobState
from scheduler_lib.execution.retry import RetryPolicy
from scheduler_lib.store.jobs import get_job, put_job
from tests.api.conftest import RG, SUB, arm_error, http_action, job_body, job_path, make_collection
from tests.support.certs import make_pki

RETRY_PATH = "properties.action.retryPolicy.retryInterval"


def _dotnet_job(interval: str = "00:01:00", **recurrence: Any) -> dict[str, Any]:
    """A job as the .NET SDK 2.x writes it (its recorded test sessions)."""
    return {
        "properties": {
            "startTime": "2026-03-09T00:00:00Z",
            "action": {
                "type": "Http",
                "request": {"uri": "http://example.com/", "method": "GET"},
                "retryPolicy": {"retryType": "Fixed", "retryInterval": interval, "retryCount": 2},
            },
            "recurrence": {"frequency": "Week", "interval": 1, "count": 100, **recurrence},
            "state": "Enabled",
        }
    }


@pytest.fixture
def collection(client) -> None:
    make_collection(client)


@pytest.mark.parametrize(
    ("sent", "meant"),
    [
        pytest.param("00:01:00", "PT1M", id="hh:mm:ss"),
        pytest.param("1.02:03:04", "P1DT2H3M4S", id="d.hh:mm:ss"),
        pytest.param("00:00:30.5000000", "PT30.5S", id="hh:mm:ss.fffffff"),
    ],
)
def test_a_timespan_retry_interval_is_accepted_and_echoed(
    client, client_ext, collection, store, sent: str, meant: str
) -> None:
    created = client.put(job_path(), json=_dotnet_job(sent))
    assert created.status_code == 201, created.text
    assert created.json()["properties"]["action"]["retryPolicy"]["retryInterval"] == sent
    assert client.get(job_path()).json()["properties"]["action"]["retryPolicy"] == {
        "retryType": "fixed",
        "retryInterval": sent,
        "retryCount": 2,
    }
    # Stored as what the client meant (the executor reads it), beside how it was written.
    record = get_job(store, SUB, RG, "coll", "job1")
    assert record.definition.document["action"]["retryPolicy"]["retryInterval"] == meant
    assert record.original_form == {"durations": {"action.retryPolicy.retryInterval": sent}}
    policy = RetryPolicy.from_action(record.definition.document["action"])
    assert policy.interval.total_seconds() == {"PT1M": 60, "P1DT2H3M4S": 93784}.get(meant, 30.5)
    # 2026-12-01 answers ISO 8601.
    policy_ext = client_ext.get(job_path()).json()["properties"]["action"]["retryPolicy"]
    assert policy_ext == {"retryType": "Fixed", "retryInterval": meant, "retryCount": 2}


def test_an_iso_retry_interval_is_answered_in_iso(client, collection) -> None:
    created = client.put(job_path(), json=_dotnet_job("PT60S"))
    assert created.json()["properties"]["action"]["retryPolicy"]["retryInterval"] == "PT1M"


@pytest.mark.parametrize(
    "sent",
    [
        pytest.param("-00:01:00", id="negative-timespan"),
        pytest.param("1 minute", id="words"),
        pytest.param("00:61:00", id="sixty-one-minutes"),
        pytest.param(60, id="number"),
    ],
)
def test_a_duration_of_neither_form_is_refused(client, client_ext, collection, sent) -> None:
    for api in (client, client_ext):
        error = arm_error(api.put(job_path(), json=_dotnet_job(sent)), 400)
        assert error["target"] == RETRY_PATH


def test_2026_accepts_a_timespan_and_answers_iso(client, client_ext, collection) -> None:
    created = client_ext.put(job_path(), json=_dotnet_job("00:02:00"))
    assert created.status_code == 201, created.text
    assert created.json()["properties"]["action"]["retryPolicy"]["retryInterval"] == "PT2M"
    # The client wrote a TimeSpan: a 2016-03-01 reader sees it as written.
    policy = client.get(job_path()).json()["properties"]["action"]["retryPolicy"]
    assert policy["retryInterval"] == "00:02:00"


def test_a_patch_keeps_how_the_untouched_interval_was_written(
    client, client_ext, collection
) -> None:
    client.put(job_path(), json=_dotnet_job("00:01:00"))
    for api in (client, client_ext):
        patched = api.patch(job_path(), json={"properties": {"recurrence": {"count": 5}}})
        assert patched.status_code == 200, patched.text
        policy = client.get(job_path()).json()["properties"]["action"]["retryPolicy"]
        assert policy["retryInterval"] == "00:01:00"
    replaced = {
        "properties": {"action": {"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT5M"}}}
    }
    answer = client.patch(job_path(), json=replaced).json()
    assert answer["properties"]["action"]["retryPolicy"]["retryInterval"] == "PT5M"


def test_a_timespan_time_to_live_is_echoed(client, collection, settings) -> None:
    action = {
        "type": "ServiceBusQueue",
        "serviceBusQueueMessage": {
            "namespace": "contoso-bus",
            "queueName": "q1",
            "message": "m",
            "transportType": "NetMessaging",
            "authentication": {"type": "SharedAccessKey", "sasKeyName": "k", "sasKey": "s"},
            "brokeredMessageProperties": {"timeToLive": "1.00:00:00"},
        },
    }
    created = client.put(job_path(), json=job_body(action=action))
    assert created.status_code == 201, created.text
    message = created.json()["properties"]["action"]["serviceBusQueueMessage"]
    assert message["brokeredMessageProperties"] == {"timeToLive": "1.00:00:00"}
    assert message["transportType"] == "netMessaging"
    assert message["authentication"] == {"type": "sharedAccessKey", "sasKeyName": "k"}


def test_job_enums_are_answered_as_the_service_wrote_them(client, client_ext, collection):
    body = _dotnet_job(schedule={"weekDays": ["Monday", "FRIDAY"], "hours": [9]})
    body["properties"]["action"]["errorAction"] = {
        "type": "StorageQueue",
        "queueMessage": {"storageAccount": "devstoreaccount1", "queueName": "q", "message": "m"},
        "retryPolicy": {"retryType": "None"},
    }
    answer = client.put(job_path(), json=body).json()["properties"]
    assert answer["state"] == "enabled"
    assert answer["recurrence"]["frequency"] == "week"
    assert answer["recurrence"]["schedule"]["weekDays"] == ["monday", "friday"]
    assert answer["action"]["retryPolicy"]["retryType"] == "fixed"
    assert answer["action"]["errorAction"]["retryPolicy"] == {"retryType": "none"}
    assert (answer["action"]["type"], answer["action"]["errorAction"]["type"]) == (
        "Http",
        "StorageQueue",
    )
    ext = client_ext.get(job_path()).json()["properties"]
    assert (ext["state"], ext["recurrence"]["frequency"]) == ("Enabled", "Week")
    assert ext["recurrence"]["schedule"]["weekDays"] == ["Monday", "Friday"]
    assert ext["action"]["retryPolicy"]["retryType"] == "Fixed"
    # Input stays case-insensitive: what a 2016-03-01 answer says can be sent back.
    assert client.put(job_path(), json={"properties": answer}).status_code == 200


def test_monthly_occurrences_come_back_as_occurrence(client, client_ext, collection) -> None:
    schedule = {"monthlyOccurrences": [{"day": "Friday", "Occurrence": -1}]}
    body = _dotnet_job(schedule=schedule)
    body["properties"]["recurrence"]["frequency"] = "Month"
    answer = client.put(job_path(), json=body).json()["properties"]
    [entry] = answer["recurrence"]["schedule"]["monthlyOccurrences"]
    assert entry == {"day": "friday", "occurrence": -1, "Occurrence": -1}
    assert client.put(job_path(), json={"properties": answer}).status_code == 200
    [ext] = client_ext.get(job_path()).json()["properties"]["recurrence"]["schedule"][
        "monthlyOccurrences"
    ]
    assert ext == {"day": "Friday", "Occurrence": -1}
    entry["Occurrence"] = 2  # two different numbers are still an error
    error = arm_error(client.put(job_path(), json={"properties": answer}), 400)
    assert "monthlyOccurrences[0]" in error["target"]


def test_what_nobody_set_is_left_out_and_interval_filled(client, client_ext, collection, store):
    body = job_body(recurrence={"frequency": "Hour"})
    answer = client.put(job_path(), json=body).json()["properties"]
    assert "retryPolicy" not in answer["action"]
    assert answer["recurrence"] == {"frequency": "hour", "interval": 1}
    # The default still applies (stored for the executor); 2026-12-01 shows it.
    stored = get_job(store, SUB, RG, "coll", "job1").definition.document["action"]["retryPolicy"]
    assert stored == {"retryType": "Fixed", "retryInterval": "PT30S", "retryCount": 4}
    ext = client_ext.get(job_path()).json()["properties"]
    assert ext["action"]["retryPolicy"] == stored
    assert ext["recurrence"] == {"frequency": "Hour", "interval": 1}


def test_a_job_created_disabled_has_no_status(client, client_ext, collection) -> None:
    body = job_body(startTime="2026-03-05T00:00:00Z", state="Disabled")
    created = client.put(job_path(), json=body).json()["properties"]
    assert created["state"] == "disabled" and "status" not in created
    assert "status" not in client.get(job_path()).json()["properties"]
    ext = client_ext.get(job_path()).json()["properties"]["status"]
    assert ext == {
        "executionCount": 0,
        "failureCount": 0,
        "faultedCount": 0,
        "consecutiveFailures": 0,
        "health": "Healthy",  # the dead-man switch's verdict (docs/notifications.md)
    }


@pytest.mark.parametrize("state", [JobState.DISABLED, JobState.COMPLETED, JobState.FAULTED])
def test_only_a_job_that_will_run_shows_a_next_execution(
    client, client_ext, collection, store, state: JobState
) -> None:
    """A job keeps the time it stopped at (Completed, Faulted) or would resume at
    (Disabled); nothing runs then, so no answer shows it (any api-version)."""
    body = job_body(startTime="2026-03-05T00:00:00Z", recurrence={"frequency": "Day"})
    assert (
        client.put(job_path(), json=body).json()["properties"]["status"]["nextExecutionTime"]
        == "2026-03-05T00:00:00Z"
    )
    record = get_job(store, SUB, RG, "coll", "job1")
    put_job(
        store,
        replace(
            record,
            state=state,
            execution_count=1,
            last_execution_time=datetime.fromisoformat("2026-03-04T09:00:00Z"),
        ),
    )
    for api in (client, client_ext):
        status = api.get(job_path()).json()["properties"]["status"]
        assert "nextExecutionTime" not in status and status["executionCount"] == 1


def test_client_certificate_expiry_under_both_names(client, client_ext, collection, tmp_path):
    pki = make_pki(tmp_path, client_common_name="cert-job")
    auth = {"type": "ClientCertificate", "pfx": pki.client_pfx_b64("pw"), "password": "pw"}
    action = http_action(uri="https://example.com/", authentication=auth)
    answer = client.put(job_path(), json=job_body(action=action)).json()["properties"]
    read = answer["action"]["request"]["authentication"]
    assert (
        read["certificateExpiration"]
        == read["certificateExpirationDate"]
        == ("2099-12-31T23:59:59Z")
    )
    assert read["type"] == "ClientCertificate"
    assert client.put(job_path(), json={"properties": answer}).status_code == 200
    ext = client_ext.get(job_path()).json()["properties"]["action"]["request"]["authentication"]
    assert "certificateExpiration" not in ext and ext["certificateExpirationDate"]


def test_a_job_stored_by_the_previous_version_still_reads(client, collection, store) -> None:
    """An entity without `OriginalForm` (every job stored before it existed): its answer is
    the canonical definition, in the 2016-03-01 spelling."""
    client.put(job_path(), json=_dotnet_job("00:01:00"))
    record = get_job(store, SUB, RG, "coll", "job1")
    entity = store.table("Jobs").get_entity(record.collection_key, "job1")
    del entity["OriginalForm"]
    store.table("Jobs").update_entity(entity, mode="replace")
    assert get_job(store, SUB, RG, "coll", "job1").original_form == {}
    policy = client.get(job_path()).json()["properties"]["action"]["retryPolicy"]
    assert policy == {"retryType": "fixed", "retryInterval": "PT1M", "retryCount": 2}


def test_lists_end_with_a_null_next_link_in_2016(client, client_ext, collection) -> None:
    client.put(job_path(), json=job_body())
    for path in (job_path().rsplit("/", 1)[0], job_path() + "/history"):
        assert client.get(path).json()["nextLink"] is None
        assert "nextLink" not in client_ext.get(path).json()
    paged = client.put(job_path("job2"), json=job_body()) and client.get(
        job_path().rsplit("/", 1)[0], params={"$top": 1}
    )
    assert paged.json()["nextLink"].startswith("http")


def test_dotnet_sdk_answers_match_the_recorded_shape(client, collection) -> None:
    """The second PUT of the .NET SDK's recorded CreateUpdateDelete session: a job replaced
    Disabled, without retryPolicy or recurrence, answered with neither and no status."""
    client.put(job_path(), json=_dotnet_job())
    body = {
        "properties": {
            "startTime": "2026-03-09T00:00:00Z",
            "state": "Disabled",
            "action": http_action(),
        }
    }
    replaced = client.put(job_path(), json=body)
    assert replaced.status_code == 200
    assert replaced.json()["properties"] == {
        "startTime": "2026-03-09T00:00:00Z",
        "action": http_action(),
        "state": "disabled",
    }
