"""Claims and finishes racing on one real Azurite job entity: the ETag loops must let exactly
one worker take an attempt, and must not lose any worker's counters."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution import claims
from scheduler_lib.execution.decide import Verdict
from scheduler_lib.execution.lifecycle import executor_state
from scheduler_lib.store.jobs import find_job
from scheduler_lib.store.tables import TableStore
from tests.execution.harness import T0, http_action, make_job

WORKERS = 6


def test_racing_workers_claim_an_attempt_exactly_once(store: TableStore) -> None:
    job = make_job(store, http_action("http://127.0.0.1:9/"))
    message = ExecutionMessage.scheduled(job.key, T0, 1)

    with ThreadPoolExecutor(WORKERS) as pool:
        results = list(
            pool.map(lambda i: claims.claim(store, message, f"m-{i}", now=T0), range(WORKERS))
        )

    won = [r for r in results if not isinstance(r, claims.Skip)]
    assert len(won) == 1 and won[0][1] is Verdict.RUN
    assert {r.disposition for r in results if isinstance(r, claims.Skip)} == {"Duplicate"}


def test_racing_finishes_keep_every_workers_counters(store: TableStore) -> None:
    job = make_job(store, http_action("http://127.0.0.1:9/"))
    messages = [
        ExecutionMessage.scheduled(job.key, T0 + timedelta(minutes=i), i + 1)
        for i in range(WORKERS)
    ]
    taken = [claims.claim(store, m, f"m-{i}", now=T0) for i, m in enumerate(messages)]
    assert not any(isinstance(t, claims.Skip) for t in taken)
    stale = find_job(store, job.key)  # every worker starts from the same, soon stale, read
    failed = claims.Attempt(succeeded=False, started=T0, faulted_now=False, final=True)

    with ThreadPoolExecutor(WORKERS) as pool:
        list(
            pool.map(
                lambda im: claims.finish(store, stale, im[1], f"m-{im[0]}", failed, now=T0),
                enumerate(messages),
            )
        )

    after = find_job(store, job.key)
    assert (after.execution_count, after.failure_count) == (WORKERS, WORKERS)
    finished = executor_state(after).claims
    assert all(finished[m.execution_tag].final for m in messages)


def test_finish_on_a_deleted_job_returns_none(store: TableStore) -> None:
    from scheduler_lib.store.jobs import delete_job

    job = make_job(store, http_action("http://127.0.0.1:9/"))
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    record, *_ = claims.claim(store, message, "m", now=T0)
    delete_job(store, record)

    done = claims.Attempt(succeeded=True, started=T0, faulted_now=False, final=True)
    assert claims.finish(store, record, message, "m", done, now=T0) is None


def test_a_job_with_the_most_claims_still_fits_in_its_table_property(store: TableStore) -> None:
    """Table storage refuses a string property over 32K characters: a busy job's claims (one
    per recent occurrence, real uuid message ids) must stay well below that."""
    import json
    import uuid

    from scheduler_lib.execution.lifecycle import MAX_CLAIMS, with_attempt, with_claim
    from scheduler_lib.store.jobs import put_job

    record = make_job(store, http_action("http://127.0.0.1:9/"))
    for i in range(MAX_CLAIMS + 10):
        message = ExecutionMessage.scheduled(record.key, T0 + timedelta(minutes=i), i + 1)
        message_id = str(uuid.uuid4())
        record = with_claim(record, message, message_id, now=T0)
        record = with_attempt(
            record, message, message_id, succeeded=False, started=T0, faulted_now=True,
            final=True, now=T0,
        )  # fmt: skip
    put_job(store, record, etag=record.etag)

    stored = find_job(store, record.key)
    assert len(executor_state(stored).claims) == MAX_CLAIMS
    assert len(json.dumps(stored.bookkeeping.to_stored())) < 16_000
