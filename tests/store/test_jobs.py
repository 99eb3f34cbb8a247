"""Jobs round-trip through real Table storage (Azurite): records, paging, ETags."""

from datetime import UTC, datetime, timedelta

import pytest

from scheduler_lib.domain import Bookkeeping, JobDefinition, JobRecord
from scheduler_lib.errors import (
    ConflictError,
    NotFoundError,
    PreconditionFailedError,
    ValidationError,
)
from scheduler_lib.store.jobs import count_jobs, delete_job, find_job, get_job, list_jobs, put_job
from scheduler_lib.store.tables import TableStore
from scheduler_lib.wire.jobs import status_of

CREATED = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)


def _job(name: str, state: str = "Enabled", **kwargs) -> JobRecord:
    return JobRecord(
        subscription_id="Sub",
        resource_group="RG",
        collection_name="Coll",
        name=name,
        definition=JobDefinition(
            {"action": {"type": "Http", "request": {"uri": "http://x", "method": "GET"}}}
        ),
        created_time=CREATED,
        state=state,
        **kwargs,
    )


def test_round_trip_with_status_and_bookkeeping(store: TableStore) -> None:
    record = _job(
        "Ping",
        execution_count=3,
        last_execution_time=datetime(2026, 3, 4, 9, 1, tzinfo=UTC),
        next_execution_time=datetime(2026, 3, 4, 9, 2, tzinfo=UTC),
        bookkeeping=Bookkeeping(occurrences=3),
    )
    put_job(store, record)
    got = get_job(store, "sub", "rg", "coll", "PING")
    assert got.name == "Ping" and got.definition == record.definition
    assert got.created_time == CREATED and got.bookkeeping == Bookkeeping(occurrences=3)
    assert status_of(got, CREATED) == {
        "executionCount": 3,
        "failureCount": 0,
        "faultedCount": 0,
        "lastExecutionTime": "2026-03-04T09:01:00Z",
        "nextExecutionTime": "2026-03-04T09:02:00Z",
    }
    assert find_job(store, got.key) == got


def test_absent_times_stay_absent(store: TableStore) -> None:
    put_job(store, _job("once"))
    got = get_job(store, "sub", "rg", "coll", "once")
    assert got.last_execution_time is None and got.next_execution_time is None
    assert "nextExecutionTime" not in status_of(got, CREATED)


def test_paging_walks_every_job_once(store: TableStore) -> None:
    names = [f"job{i:03d}" for i in range(23)]
    for name in names:
        put_job(store, _job(name, state="Disabled" if name.endswith("7") else "Enabled"))
    seen: list[str] = []
    token = None
    while True:
        page, token = list_jobs(store, "sub", "rg", "coll", page_size=10, continuation=token)
        assert len(page) <= 10
        seen += [j.name for j in page]
        if token is None:
            break
    assert seen == names
    disabled, _ = list_jobs(store, "sub", "rg", "coll", state="Disabled")
    assert [j.name for j in disabled] == ["job007", "job017"]
    assert count_jobs(store, disabled[0].collection_key) == 23


def test_garbage_continuation_is_a_validation_error(store: TableStore) -> None:
    with pytest.raises(ValidationError) as err:
        list_jobs(store, "sub", "rg", "coll", continuation="!!not-a-token")
    assert err.value.field == "$skiptoken"


def test_concurrency_conflicts(store: TableStore) -> None:
    first = put_job(store, _job("a"), create_only=True)
    with pytest.raises(ConflictError):
        put_job(store, _job("A"), create_only=True)
    second = put_job(store, _job("a", execution_count=1), etag=first.etag)
    with pytest.raises(PreconditionFailedError):
        put_job(store, _job("a", execution_count=2), etag=first.etag)
    with pytest.raises(PreconditionFailedError):
        delete_job(store, first, etag=first.etag)
    delete_job(store, second, etag=second.etag)
    with pytest.raises(NotFoundError):
        get_job(store, "sub", "rg", "coll", "a")
    assert find_job(store, second.key) is None


SENT = datetime(2026, 3, 4, 9, 10, 30, tzinfo=UTC)
AFTER_SENT = datetime(2026, 3, 4, 9, 11, 30, tzinfo=UTC)
BEFORE = datetime(2026, 3, 4, 9, 9, 30, tzinfo=UTC)
BETWEEN = datetime(2026, 3, 4, 9, 11, tzinfo=UTC)


@pytest.mark.parametrize(
    ("state", "now", "expected"),
    [
        pytest.param("Enabled", BEFORE, SENT, id="sent-ahead"),
        pytest.param("Enabled", SENT, AFTER_SENT, id="sent-one-now-due"),
        pytest.param("Enabled", BETWEEN, AFTER_SENT, id="sent-past"),
        pytest.param("Disabled", BEFORE, None, id="disabled-runs-nothing"),
    ],
)
def test_upcoming_execution_counts_an_occurrence_sent_ahead(
    state: str, now: datetime, expected: datetime | None
) -> None:
    """The dispatcher sends 09:10:30 a minute ahead and advances the job to 09:11:30: until
    09:10:30 the job's next execution is still 09:10:30. A Disabled job runs neither, so it
    has no next execution (the executor drops what was sent)."""
    record = JobRecord(
        "s", "rg", "c", "j", JobDefinition({}), created_time=datetime(2026, 3, 4, tzinfo=UTC),
        state=state,
        next_execution_time=AFTER_SENT,
        bookkeeping=Bookkeeping.from_stored({"dispatched": "2026-03-04T09:10:30Z"}),
    )  # fmt: skip
    assert record.upcoming_execution(now) == expected
    shown = expected.isoformat().replace("+00:00", "Z") if expected else None
    assert status_of(record, now).get("nextExecutionTime") == shown


def test_upcoming_execution_is_the_earliest_of_two_sent_ahead() -> None:
    """Two occurrences in flight (09:10:30 and 09:11:30, the job advanced to 09:12:30): the
    earliest not yet started is shown; sending a third forgets only long-started ones."""
    sent = Bookkeeping().with_sent(SENT).with_sent(SENT + timedelta(minutes=1))
    assert sent.to_stored()["dispatched"] == ["2026-03-04T09:10:30Z", "2026-03-04T09:11:30Z"]
    record = JobRecord(
        "s", "rg", "c", "j", JobDefinition({}), created_time=datetime(2026, 3, 4, tzinfo=UTC),
        next_execution_time=SENT + timedelta(minutes=2), bookkeeping=sent,
    )  # fmt: skip
    assert record.upcoming_execution(BEFORE) == SENT
    assert record.upcoming_execution(SENT) == SENT + timedelta(minutes=1)
    assert record.upcoming_execution(SENT + timedelta(minutes=1)) == SENT + timedelta(minutes=2)
    later = sent.with_sent(SENT + timedelta(minutes=10))
    assert later.to_stored()["dispatched"] == ["2026-03-04T09:20:30Z"]
