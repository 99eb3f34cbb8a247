"""Job operations over real HTTP against Azurite: create/update, status and due index,
state rules, delete, run."""

from datetime import UTC, datetime, timedelta

from scheduler_lib.domain import Bookkeeping, ExecutorState
from scheduler_lib.domain.history_counter import EMPTY_HISTORY
from scheduler_lib.domain.keys import job_key
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.store.due_index import due_rows
from scheduler_lib.store.execution_queue import ExecutionQueue
from scheduler_lib.store.history import HistoryEntry, add_history, list_history
from scheduler_lib.store.history_purge import pending_history_purges, purge_histories
from scheduler_lib.store.jobs import get_job, put_job
from tests.api.conftest import RG, SUB, arm_error, http_action, job_body, job_path, make_collection

NOW = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)


def test_create_computes_status_and_writes_the_due_row(client, store):
    make_collection(client)
    body = job_body(
        startTime="2026-03-04T10:30:00Z", recurrence={"frequency": "hour", "interval": 2}
    )
    created = client.put(job_path("Ping"), json=body)
    assert created.status_code == 201 and created.headers["etag"]
    job = created.json()
    assert job["id"].endswith("/jobCollections/coll/jobs/Ping")
    assert job["name"] == "coll/Ping" and job["type"] == "Microsoft.Scheduler/jobCollections/jobs"
    assert job["properties"]["state"] == "enabled"  # as 2016-03-01 wrote it (`dialect`)
    assert job["properties"]["recurrence"] == {"frequency": "hour", "interval": 2}
    assert job["properties"]["status"] == {
        "executionCount": 0,
        "failureCount": 0,
        "faultedCount": 0,
        "nextExecutionTime": "2026-03-04T10:30:00Z",
    }
    record = get_job(store, SUB, RG, "coll", "ping")
    # Nothing counted yet; its history known empty (the executor's first entry reads no counter).
    fresh = Bookkeeping(executor=ExecutorState(history=EMPTY_HISTORY))
    assert record.created_time == NOW and record.bookkeeping == fresh
    rows = list(due_rows(store, start=NOW, through=NOW + timedelta(hours=2)))
    assert [(r.job_key, r.due) for r in rows] == [
        (record.key, datetime(2026, 3, 4, 10, 30, tzinfo=UTC))
    ]
    got = client.get(job_path("PING"))
    assert got.status_code == 200 and got.json() == job
    assert got.headers["etag"] == created.headers["etag"]


def test_update_answers_200_and_reschedules_only_on_timing_change(client, store, clock):
    make_collection(client)
    client.put(job_path(), json=job_body(recurrence={"frequency": "Day"}))
    clock.advance(timedelta(hours=1))
    same_timing = client.put(
        job_path(),
        json=job_body(recurrence={"frequency": "Day"}, action=http_action(method="POST")),
    )
    # The first occurrence (created at 09:00, due at once) was dispatched by the PUT itself.
    assert same_timing.status_code == 200
    assert same_timing.json()["properties"]["status"]["nextExecutionTime"] == "2026-03-05T09:00:00Z"
    new_timing = client.put(
        job_path(), json=job_body(recurrence={"frequency": "Day", "interval": 2})
    )
    # A new schedule starts over from now (10:00): that occurrence is dispatched at once too.
    assert new_timing.json()["properties"]["status"]["nextExecutionTime"] == "2026-03-06T10:00:00Z"
    assert get_job(store, SUB, RG, "coll", "job1").created_time == NOW + timedelta(hours=1)


def test_past_end_time_is_stored_completed_and_then_frozen(client):
    make_collection(client)
    body = job_body(
        recurrence={"frequency": "Day", "endTime": "2026-01-01T00:00:00Z"},
        startTime="2025-12-01T00:00:00Z",
    )
    created = client.put(job_path(), json=body)
    assert created.status_code == 201
    assert created.json()["properties"]["state"] == "completed"
    assert "nextExecutionTime" not in created.json()["properties"]["status"]
    assert arm_error(client.put(job_path(), json=job_body()), 409)["code"] == "Conflict"
    arm_error(client.patch(job_path(), json={"properties": {"state": "Enabled"}}), 409)
    assert client.delete(job_path()).status_code == 200


def test_faulted_jobs_cannot_change(client, store):
    from dataclasses import replace

    make_collection(client)
    client.put(job_path(), json=job_body())
    record = get_job(store, SUB, RG, "coll", "job1")
    put_job(store, replace(record, state="Faulted"))
    arm_error(client.patch(job_path(), json={"properties": {"state": "Disabled"}}), 409)


def test_disable_then_enable_resumes_from_now(client, clock):
    make_collection(client)
    body = job_body(startTime="2026-03-04T09:00:00Z", recurrence={"frequency": "Hour"})
    client.put(job_path(), json=body)
    disabled = client.patch(job_path(), json={"properties": {"state": "disabled"}})
    assert disabled.status_code == 200 and disabled.json()["properties"]["state"] == "disabled"
    clock.advance(timedelta(hours=5, minutes=10))
    enabled = client.patch(job_path(), json={"properties": {"state": "Enabled"}})
    assert enabled.json()["properties"]["status"]["nextExecutionTime"] == "2026-03-04T15:00:00Z"


def test_one_time_job_without_start_time_runs_now(client, settings):
    """Due before the next dispatcher tick would see it, so the PUT dispatches it itself."""
    make_collection(client)
    created = client.put(job_path(), json=job_body())
    properties = created.json()["properties"]
    assert properties["state"] == "enabled"  # until the executor finishes the occurrence
    assert "nextExecutionTime" not in properties["status"]
    assert created.headers["etag"] == client.get(job_path()).headers["etag"]
    [received] = ExecutionQueue(settings).receive(max_messages=5)
    message = ExecutionMessage.from_json(received.body)
    assert (message.occurrence, message.occurrence_number, message.manual) == (NOW, 1, False)


def test_a_job_due_after_the_next_tick_is_left_to_the_dispatcher(client, settings, store):
    make_collection(client)
    created = client.put(job_path(), json=job_body(startTime="2026-03-04T09:05:00Z"))
    assert created.json()["properties"]["status"]["nextExecutionTime"] == "2026-03-04T09:05:00Z"
    assert ExecutionQueue(settings).receive(max_messages=5) == []
    [row] = due_rows(store, start=NOW, through=NOW + timedelta(minutes=10))
    assert row.due == datetime(2026, 3, 4, 9, 5, tzinfo=UTC)


def test_job_needs_its_collection(client):
    error = arm_error(client.put(job_path(collection="missing"), json=job_body()), 404)
    assert "missing" in error["message"]


def test_patch_merges_into_the_stored_job(client):
    make_collection(client)
    client.put(
        job_path(),
        json=job_body(recurrence={"frequency": "Week", "schedule": {"weekDays": ["Monday"]}}),
    )
    patched = client.patch(
        job_path(), json={"properties": {"action": {"request": {"headers": {"X-Job": "1"}}}}}
    )
    assert patched.status_code == 200
    request = patched.json()["properties"]["action"]["request"]
    assert request == {"uri": "http://example.com/ping", "method": "GET", "headers": {"X-Job": "1"}}
    assert patched.json()["properties"]["recurrence"]["schedule"] == {"weekDays": ["monday"]}
    arm_error(client.patch(job_path("nope"), json={"properties": {}}), 404)


def test_delete_answers_200_and_removes_history_and_due_row(client, store):
    make_collection(client)
    client.put(job_path(), json=job_body(startTime="2026-03-04T09:30:00Z"))
    key = job_key(SUB, RG, "coll", "job1")
    add_history(store, HistoryEntry(key, NOW, NOW, NOW, "MainAction", "Completed", "ok"))
    deleted = client.delete(job_path())
    assert deleted.status_code == 200
    arm_error(client.get(job_path()), 404)
    # The history goes in the background (a tick's upkeep, or the daily housekeeping).
    assert pending_history_purges(store) == [key]
    purge_histories(store)
    assert list_history(store, key)[0] == [] and pending_history_purges(store) == []
    assert list(due_rows(store, start=NOW, through=NOW + timedelta(hours=1))) == []
    arm_error(client.delete(job_path()), 404)


def test_run_queues_a_manual_execution_and_answers_200(client, settings):
    make_collection(client)
    client.put(job_path(), json=job_body(startTime="2026-05-01T00:00:00Z"))
    ran = client.post(job_path() + "/run")
    assert ran.status_code == 200
    received = ExecutionQueue(settings).receive(max_messages=5)
    assert len(received) == 1
    message = ExecutionMessage.from_json(received[0].body)
    assert message.manual and message.job_key == job_key(SUB, RG, "coll", "job1")
    assert message.occurrence == NOW
    arm_error(client.post(job_path("nope") + "/run"), 404)


def test_occurrence_in_either_case_is_stored_lower_case_and_returned_in_both_spellings(
    client, store
):
    """2016-03-01 answered `occurrence`; `Occurrence` beside it is what the SDKs read."""
    make_collection(client)
    for name, key in (("upper", "Occurrence"), ("lower", "occurrence")):
        schedule = {"monthlyOccurrences": [{"day": "monday", key: 1}]}
        response = client.put(
            job_path(name), json=job_body(recurrence={"frequency": "Month", "schedule": schedule})
        )
        assert response.status_code == 201, response.text
        wire = response.json()["properties"]["recurrence"]["schedule"]["monthlyOccurrences"]
        assert wire == [{"day": "monday", "occurrence": 1, "Occurrence": 1}]
        stored = get_job(store, SUB, RG, "coll", name).definition.document["recurrence"]["schedule"]
        assert stored["monthlyOccurrences"] == [{"day": "Monday", "occurrence": 1}]


def test_far_future_schedules_are_stored_not_server_errors(client):
    make_collection(client)
    body = job_body(startTime="9999-12-31T23:00:00Z", recurrence={"frequency": "Minute"})
    response = client.put(job_path(), json=body)
    assert response.status_code == 201
    assert response.json()["properties"]["status"]["nextExecutionTime"] == "9999-12-31T23:00:00Z"


def test_recurrence_count_is_bounded_by_the_apis_int32(client):
    make_collection(client)
    for too_many in (2**31, 2**64):
        body = job_body(recurrence={"frequency": "Minute", "count": too_many})
        error = arm_error(client.put(job_path(), json=body), 400)
        assert error["target"] == "properties.recurrence.count"
    most = job_body(recurrence={"frequency": "Minute", "count": 2**31 - 1})
    stored = client.put(job_path(), json=most)
    assert stored.status_code == 201, stored.text
    assert stored.json()["properties"]["recurrence"]["count"] == 2**31 - 1


def test_count_and_end_time_together_end_at_the_earlier(client):
    """The spec forbids both; Azure accepted both, so this does too: the earlier end wins."""
    make_collection(client)
    for recurrence, runs in (
        ({"frequency": "Hour", "count": 3, "endTime": "2026-03-05T00:00:00Z"}, 3),
        ({"frequency": "Hour", "count": 30, "endTime": "2026-03-04T11:00:00Z"}, 3),
    ):
        timing = {"startTime": "2026-03-04T09:00:00Z", "recurrence": recurrence}
        preview = client.post("/preview", json={**timing, "count": 10}).json()
        assert len(preview["executions"]) == runs
        created = client.put(job_path(), json=job_body(**timing))
        assert created.status_code in (200, 201), created.text
