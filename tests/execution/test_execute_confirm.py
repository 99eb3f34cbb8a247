"""An occurrence delivered early is read and decided before its second and claimed at it
with one write, conditional on the ETag read before the wait (`claims.claim` with `early`):
whatever changed the job during the wait makes that write fail, and the attempt is read and
decided again at that moment, as a fresh delivery would be.

Real Azurite tables and queue and a real local HTTP server; what happens "during the wait"
is done by the fake clock's `sleep`, which the executor calls to wait for its second, so no
test sleeps. (tests/execution/test_execute_incarnation.py has the deletion, the disabling
and the job created again whose own message runs during the stale one's wait.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta

from scheduler_lib.domain import Bookkeeping, CollectionRecord, JobDefinition
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution.execute import ExecutionReport
from scheduler_lib.execution.lifecycle import executor_state
from scheduler_lib.store.collections import put_collection
from scheduler_lib.store.jobs import delete_job, find_job, put_job
from tests.execution.harness import COLL, RG, SUB, T0, Driver, http_action, make_job
from tests.support.http_target import HttpTarget


def _during_the_wait(driver: Driver, meanwhile: Callable[[], None]) -> list[float]:
    """Have the executor's first wait call `meanwhile` (then time passes as it asked);
    returns the waits it asked for."""
    waits: list[float] = []
    sleep = driver.clock.sleep

    def wait(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 1:
            meanwhile()
        sleep(seconds)

    driver.clock.sleep = wait  # type: ignore[method-assign]
    return waits


def _early(driver: Driver, message: ExecutionMessage, *, message_id: str = "m1") -> ExecutionReport:
    """Deliver `message` as the queue delivers a scheduled occurrence: 1.5 s early."""
    driver.clock.now = message.occurrence - timedelta(seconds=1.5)
    return driver.run(message, message_id=message_id)


def test_a_job_deleted_during_the_wait_is_not_run_nor_written_back(
    driver: Driver, target: HttpTarget
) -> None:
    """The claim at the second is a replace conditional on the ETag read before the wait: on
    a job deleted meanwhile it fails (404) instead of writing the job back."""
    job = make_job(driver.store, http_action(target.url))
    waits = _during_the_wait(driver, lambda: delete_job(driver.store, driver.job(job.key)))

    report = _early(driver, ExecutionMessage.scheduled(job.key, T0, 1))

    assert len(waits) == 1
    assert (report.disposition, report.reason) == ("Dropped", "the job no longer exists")
    assert target.requests == [] and driver.history(job.history_key) == []
    assert find_job(driver.store, job.key) is None


def test_a_job_disabled_during_the_wait_is_not_run_and_stays_disabled(
    driver: Driver, target: HttpTarget
) -> None:
    """The user's change made during the wait is neither run over nor overwritten by the
    claim at the second (conditional on the job as read before the wait). The occurrence
    was never claimed, so nothing of it holds up the job's completion once enabled again
    (an occurrence claimed before it was disabled is closed instead: `lifecycle.abandoned`)."""
    job = make_job(driver.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    _during_the_wait(
        driver, lambda: put_job(driver.store, replace(driver.job(job.key), state="Disabled"))
    )

    report = _early(driver, message)

    assert (report.disposition, report.reason) == ("Dropped", "the job is Disabled")
    assert target.requests == []
    after = driver.job(job.key)
    assert after.state == "Disabled"
    assert message.execution_tag not in executor_state(after).claims
    assert driver.queue_length() == 0  # its watchdog, sent before the wait, deleted


def test_a_job_whose_action_changed_during_the_wait_runs_the_new_action(
    driver: Driver, target: HttpTarget
) -> None:
    """The occurrence runs the job as it is at its second, not as it was read before."""
    job = make_job(driver.store, http_action(target.url + "/old"))

    def replace_action() -> None:
        current = driver.job(job.key)
        document = {**current.definition.document, "action": http_action(target.url + "/new")}
        put_job(driver.store, replace(current, definition=JobDefinition(document)))

    _during_the_wait(driver, replace_action)

    report = _early(driver, ExecutionMessage.scheduled(job.key, T0, 1))

    assert report.disposition == "Ran"
    assert [request.path for request in target.requests] == ["/new"]


def test_a_job_created_again_during_the_wait_runs_the_occurrence_once_by_its_own_message(
    driver: Driver, target: HttpTarget
) -> None:
    """Deleted and created again during the wait (its successor's schedule holds the same
    second): the stale message's write at the second fails and, read again, it is dropped;
    the successor's own message, delivered after it, runs the occurrence, once."""
    first = make_job(driver.store, http_action(target.url))
    first = put_job(driver.store, replace(first, incarnation="first"), etag=first.etag)

    def delete_and_create_again() -> None:
        delete_job(driver.store, driver.job(first.key))
        successor = replace(
            first, incarnation="second", etag=None, bookkeeping=Bookkeeping(occurrences=1)
        )
        put_job(driver.store, successor, create_only=True)

    _during_the_wait(driver, delete_and_create_again)
    stale = _early(driver, ExecutionMessage.scheduled(first.key, T0, 1, incarnation="first"))
    own = _early(
        driver, ExecutionMessage.scheduled(first.key, T0, 1, incarnation="second"), message_id="m2"
    )

    assert stale.disposition == "Dropped" and "created again" in stale.reason
    assert own.disposition == "Ran" and len(target.requests) == 1
    assert driver.job(first.key).execution_count == 1


def test_a_second_delivery_racing_in_during_the_wait_runs_the_occurrence_once(
    driver: Driver, target: HttpTarget
) -> None:
    """Two deliveries of the same message (a queue's at-least-once): the second, delivered
    during the first's wait, reaches the second first and claims and runs the occurrence;
    the first's claim at the second then fails, and read again it is a Duplicate."""
    job = make_job(driver.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    racing: list[ExecutionReport] = []

    def deliver_again() -> None:
        racing.append(driver.run(message, message_id="m2"))

    _during_the_wait(driver, deliver_again)

    first = _early(driver, message, message_id="m1")

    assert [r.disposition for r in racing] == ["Ran"]
    assert (first.disposition, first.reason) == ("Duplicate", "the occurrence already finished")
    assert driver.queue_length() == 0  # both watchdogs deleted
    assert len(target.requests) == 1 and len(driver.history(job.history_key)) == 1
    assert driver.job(job.key).execution_count == 1


def test_a_job_touched_during_the_wait_is_read_again_and_runs(
    driver: Driver, target: HttpTarget
) -> None:
    """A change that does not stop the occurrence (here the job written back as it was, as
    a concurrent attempt's bookkeeping would) fails the claim at the second; read again,
    the occurrence still runs, once, and its claim ends done."""
    job = make_job(driver.store, http_action(target.url))
    message = ExecutionMessage.scheduled(job.key, T0, 1)
    _during_the_wait(driver, lambda: put_job(driver.store, driver.job(job.key)))

    report = _early(driver, message)

    assert report.disposition == "Ran" and len(target.requests) == 1
    assert executor_state(driver.job(job.key)).claims[message.execution_tag].done


def test_a_collection_disabled_during_the_wait_is_seen_after_the_second(
    driver: Driver, target: HttpTarget
) -> None:
    """The trade-off of one request at the second: the collection is not read again after
    the wait (unless the job changed too, which fails the claim), so one disabled 1-2 s
    before the second is treated like one disabled just after it: this occurrence runs, the
    next one does not."""
    job = make_job(driver.store, http_action(target.url))
    disabled = CollectionRecord(SUB, RG, COLL, "westeurope", properties={"state": "Disabled"})
    _during_the_wait(driver, lambda: put_collection(driver.store, disabled))

    ran = _early(driver, ExecutionMessage.scheduled(job.key, T0, 1))
    later = T0 + timedelta(minutes=1)
    following = _early(driver, ExecutionMessage.scheduled(job.key, later, 2), message_id="m2")

    assert ran.disposition == "Ran" and len(target.requests) == 1
    assert (following.disposition, following.reason) == (
        "Dropped", "the job collection is disabled"
    )  # fmt: skip
