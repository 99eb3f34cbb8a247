"""The heartbeat renews its lease from the job as it last wrote it (`heartbeat.renew` with
`known`): one conditional write a beat, no read, while nobody else writes the job; after
anyone else's write, the write fails, the job is read again and the lease renewed on it
(their change kept); a claim no longer this worker's is lost as before.

Real Azurite tables; requests are counted by the cost benchmark's hook on the real
requests (`storage_calls`), on a store built after it is switched on. The beat's loop runs
on the test's thread, beat by beat (`_Beats`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import timedelta

from scheduler_lib import storage_calls
from scheduler_lib.domain import JobRecord
from scheduler_lib.domain.executor_state import step_claim
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution import heartbeat, lease, lifecycle
from scheduler_lib.store import TableStore
from scheduler_lib.store.jobs import find_job, put_job
from tests.execution.harness import T0, FakeClock, http_action, make_job
from tests.execution.test_execute_claim_at_second import _Beats
from tests.support.storage_counts import methods_since


class Requests:
    """Job-table requests since the last `take`, by method."""

    def __init__(self) -> None:
        self.since = storage_calls.snapshot()

    def take(self) -> Counter[str]:
        methods = methods_since(self.since, "store.jobs [table ")
        self.since = storage_calls.snapshot()
        return methods


def _claimed(store: TableStore) -> tuple[ExecutionMessage, JobRecord]:
    job = make_job(store, http_action("http://127.0.0.1:9/"))
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    claim = lifecycle.with_claim(job, message, "m1", now=T0)
    return message, put_job(store, claim, etag=job.etag)


def _lease(store: TableStore, message: ExecutionMessage) -> object:
    record = find_job(store, message.job_key)
    assert record is not None
    claim = step_claim(record, message)
    assert claim is not None
    return claim.lease_until


def test_beats_renew_from_the_job_in_hand_one_write_each(counted_store: TableStore) -> None:
    message, record = _claimed(counted_store)
    clock = FakeClock(T0 + timedelta(seconds=3), tick=timedelta(seconds=3))
    beat = heartbeat.Heartbeat(counted_store, message, "m1", clock)
    beat.claim_with(record)
    requests = Requests()

    beat._stop = _Beats(3)  # type: ignore[assignment]  # three beats on this thread
    beat._run()

    assert requests.take() == {"PUT": 3}  # no read
    assert not beat.lost and beat.known is not None
    assert _lease(counted_store, message) == T0 + timedelta(seconds=9) + lease.LEASE
    written = find_job(counted_store, message.job_key)
    assert written is not None and beat.known.etag == written.etag


def test_after_another_writer_it_reads_again_and_keeps_their_change(
    counted_store: TableStore,
) -> None:
    message, record = _claimed(counted_store)
    theirs = put_job(counted_store, replace(record, state="Disabled"), etag=record.etag)
    clock = FakeClock(T0 + timedelta(seconds=3), tick=timedelta(0))
    requests = Requests()

    renewed = heartbeat.renew(counted_store, message, "m1", clock, known=record)  # stale in hand

    assert renewed is not None and renewed.state == "Disabled"
    assert requests.take() == {"PUT": 2, "GET": 1}  # the failed write, the read, the write
    assert _lease(counted_store, message) == T0 + timedelta(seconds=3) + lease.LEASE
    assert theirs.etag != renewed.etag


def test_a_claim_another_worker_took_is_lost(counted_store: TableStore) -> None:
    message, record = _claimed(counted_store)
    put_job(counted_store, lifecycle.with_claim(record, message, "w9", now=T0), etag=record.etag)
    beat = heartbeat.Heartbeat(counted_store, message, "m1", FakeClock(T0 + timedelta(seconds=3)))
    beat.claim_with(record)

    beat._stop = _Beats(2)  # type: ignore[assignment]
    beat._run()

    assert beat.lost
    now = find_job(counted_store, message.job_key)
    assert now is not None
    assert step_claim(now, message).message_id == "w9"  # type: ignore[union-attr]  # claimed
