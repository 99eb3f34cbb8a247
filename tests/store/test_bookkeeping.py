"""A job's bookkeeping, typed in code, keeps its stored JSON: every form ever written reads
back the same and is written back byte for byte (a deployed entity is never rewritten into
something an older or newer worker misreads); the older single-string form still reads."""

import json
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from scheduler_lib.domain import (
    Bookkeeping,
    Claim,
    ExecutorState,
    JobDefinition,
    JobRecord,
    LastFinished,
    Postponement,
)
from scheduler_lib.store.jobs import TABLE, get_job, put_job
from scheduler_lib.store.tables import TableStore, dumps

T0 = datetime(2026, 3, 4, 9, 0, 30, tzinfo=UTC)
CLAIM = {
    "claimedAt": "2026-03-04T09:00:30.120000+00:00",
    "action": "MainAction",
    "attempt": 0,
    "messageId": "m1",
    "number": 3,
    "manual": False,
    "done": True,
    "final": True,
    "faulted": False,
    "at": "2026-03-04T09:00:31.500000+00:00",
}
#: Stored forms as the code before the typing wrote them (keys as the store sorts them).
STORED_FORMS: list[dict[str, Any]] = [
    {"occurrences": 0},
    {"occurrences": 2, "dispatched": ["2026-03-04T09:00:30Z", "2026-03-04T09:01:30Z"]},
    {
        "occurrences": 3,
        "notRun": 1,
        "dispatched": ["2026-03-04T09:02:30Z"],
        "postponed": {"due": "2026-03-04T08:00:30Z", "message": "2 occurrence(s) skipped."},
        "executor": {
            "claims": {"2026-03-04T09:02:30Z#3": CLAIM},
            "lastFinished": {"number": 3, "tag": "2026-03-04T09:02:30Z#3", "faulted": False},
            "endedAt": "2026-03-04T09:02:31.500000+00:00",
        },
    },
    {"occurrences": 1, "executor": {"claims": {}}, "someday": {"x": [1, 2]}},
    # Claims as the executor writes them: one written before `claimedAt` was recorded, a
    # manual run abandoned (its job disabled), an occurrence the executor postponed, an
    # attempt running under a lease taken over twice, an errorAction retry; keys this version
    # does not know, in a claim and beside the claims.
    {
        "occurrences": 4,
        "executor": {
            "claims": {
                "old": {k: v for k, v in CLAIM.items() if k != "claimedAt"},
                "manual": {**CLAIM, "manual": True, "number": 0, "abandoned": True},
                "late": {**CLAIM, "number": 4, "postponed": True, "faulted": False},
                "leased": {
                    **CLAIM,
                    "done": False,
                    "final": False,
                    "leaseUntil": "2026-03-04T09:00:41.120000+00:00",
                    "takeovers": 2,
                },
                "error": {
                    **CLAIM,
                    "action": "ErrorAction",
                    "attempt": 2,
                    "done": False,
                    "final": False,
                    "faulted": True,
                    "later": {"y": 1},
                },
            },
            "lastFinished": {"number": 4, "tag": "late", "faulted": True},
            "someday": [1],
        },
    },
]


@pytest.mark.parametrize("stored", STORED_FORMS)
def test_every_stored_form_is_written_back_unchanged(stored: dict[str, Any]) -> None:
    assert dumps(Bookkeeping.from_stored(stored).to_stored()) == dumps(stored)


def test_the_stored_form_reads_as_typed_fields() -> None:
    got = Bookkeeping.from_stored(STORED_FORMS[2])
    assert (got.occurrences, got.not_run, got.counted) == (3, 1, 2)
    assert got.sent == (datetime(2026, 3, 4, 9, 2, 30, tzinfo=UTC),)
    assert got.postponed == Postponement(
        datetime(2026, 3, 4, 8, 0, 30, tzinfo=UTC), "2 occurrence(s) skipped."
    )
    assert got.ended_at == datetime(2026, 3, 4, 9, 2, 31, 500000, tzinfo=UTC)


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        ({}, Bookkeeping()),
        # Before several sends were remembered, one string: the latest sent.
        ({"dispatched": "2026-03-04T09:00:30Z"}, Bookkeeping(sent=(T0,))),
        # Written before `occurrences` was always present; a null count read as none.
        ({"notRun": None, "executor": None}, Bookkeeping()),
    ],
)
def test_older_forms_still_read(stored: dict[str, Any], expected: Bookkeeping) -> None:
    assert Bookkeeping.from_stored(stored) == expected


def test_the_executors_claims_read_as_typed_fields() -> None:
    executor = Bookkeeping.from_stored(STORED_FORMS[4]).executor
    assert executor is not None
    old, manual, late, error = (executor.claims[t] for t in ("old", "manual", "late", "error"))
    at = datetime(2026, 3, 4, 9, 0, 31, 500000, tzinfo=UTC)
    assert old == Claim("MainAction", 0, "m1", 3, False, at, None, done=True, final=True)
    assert old.started == at  # written before `claimedAt`: the claim's own time stands in
    assert manual.claimed_at == datetime(2026, 3, 4, 9, 0, 30, 120000, tzinfo=UTC)
    assert (manual.manual, manual.number, manual.abandoned, manual.postponed) == (
        True, 0, True, False
    )  # fmt: skip
    assert (late.postponed, late.abandoned) == (True, False)
    assert (old.lease_until, old.takeovers, late.lease_until) == (None, 0, None)
    leased = executor.claims["leased"]
    assert leased.lease_until == datetime(2026, 3, 4, 9, 0, 41, 120000, tzinfo=UTC)
    assert (leased.takeovers, leased.other) == (2, {})
    assert (error.action, error.attempt, error.done, error.final, error.faulted) == (
        "ErrorAction", 2, False, False, True
    )  # fmt: skip
    assert error.other == {"later": {"y": 1}}
    assert executor.last_finished == LastFinished(4, "late", faulted=True)
    assert (executor.ended_at, executor.other) == (None, {"someday": [1]})
    assert Bookkeeping.from_stored(STORED_FORMS[1]).executor is None


def test_a_typed_claim_is_stored_as_the_executor_stored_it() -> None:
    """Built in code (as `execution/lifecycle.py` does), the claim has the stored form the
    executor wrote before it was typed: every key, times as `isoformat()`."""
    claim = Claim(
        "MainAction", 0, "m1", 3, False,
        at=datetime(2026, 3, 4, 9, 0, 31, 500000, tzinfo=UTC),
        claimed_at=datetime(2026, 3, 4, 9, 0, 30, 120000, tzinfo=UTC),
        done=True, final=True,
    )  # fmt: skip
    ended = datetime(2026, 3, 4, 9, 2, 31, 500000, tzinfo=UTC)
    executor = ExecutorState(
        {"2026-03-04T09:02:30Z#3": claim},
        LastFinished(3, "2026-03-04T09:02:30Z#3", faulted=False),
        ended_at=ended,
    )
    assert Bookkeeping(executor=executor).to_stored()["executor"] == STORED_FORMS[2]["executor"]


@pytest.mark.parametrize("stored", [STORED_FORMS[2], STORED_FORMS[4]], ids=["ended", "claims"])
def test_a_deployed_entity_reads_and_writes_back_byte_for_byte(
    store: TableStore, stored: dict[str, Any]
) -> None:
    """Through real Table storage: an entity holding a rich form, read as a record and
    written back (as every dispatcher or executor write does), keeps the same column."""
    record = JobRecord("Sub", "RG", "Coll", "Ping", JobDefinition({"action": {}}), created_time=T0)
    put_job(store, record)
    table = store.table(TABLE)
    entity = table.get_entity(record.collection_key, "ping")
    entity["Bookkeeping"] = dumps(stored)
    table.update_entity(entity)

    read = get_job(store, "Sub", "RG", "Coll", "Ping")
    put_job(store, replace(read, execution_count=1), etag=read.etag)

    after = table.get_entity(record.collection_key, "ping")["Bookkeeping"]
    assert after == dumps(stored)
    assert json.loads(after)["occurrences"] == stored["occurrences"]


def test_a_waiting_occurrence_reads_as_typed_and_is_written_back() -> None:
    stored = {"occurrences": 2, "executor": {"claims": {}, "buffered": '{"job_key":"k"}'}}
    executor = Bookkeeping.from_stored(stored).executor
    assert executor is not None and executor.buffered == '{"job_key":"k"}'
    assert dumps(Bookkeeping.from_stored(stored).to_stored()) == dumps(stored)
    assert "buffered" not in ExecutorState().to_stored()
