"""The composition root shared by `function_app.py` and the local host.

It builds the long-lived clients once per worker (settings, table store, execution queue),
makes sure the tables and queues exist, and exposes one method per trigger. Both hosts
call exactly these methods, so what runs locally is what runs in Azure.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from functools import cached_property
from typing import Any

from fastapi import FastAPI

from scheduler_lib.actions.egress import policy_for
from scheduler_lib.api import create_app
from scheduler_lib.config import Settings
from scheduler_lib.dashboard import mount_dashboard
from scheduler_lib.dispatch import (
    CoordinatorReport,
    Dispatcher,
    PairResult,
    TickReport,
    combine_results,
    due_for_check,
    repair_jobs,
)
from scheduler_lib.domain.outcomes import Event
from scheduler_lib.errors import ValidationError
from scheduler_lib.execution import (
    ExecutionMessage,
    ExecutionQueue,
    ExecutionReport,
    Executor,
    PoisonReport,
    execution_events,
    poison_events,
    record_poisoned_body,
)
from scheduler_lib.housekeeping import HousekeepingReport, run_housekeeping
from scheduler_lib.metrics import FLUSH_EVERY, MetricsRecorder, fold_stale
from scheduler_lib.notify import Notifier, NotifyReport
from scheduler_lib.storage_patience import INTERACTIVE
from scheduler_lib.store import TICK_BUDGET, TableStore, purge_histories
from scheduler_lib.timeutil import Clock, utc_now

log = logging.getLogger("scheduler")


def create_web_app(
    settings: Settings,
    *,
    clock: Clock = utc_now,
    store: TableStore | None = None,
    queue: ExecutionQueue | None = None,
) -> FastAPI:
    """The one app the Functions host serves: the REST API (`api.create_app`, same
    arguments) with the dashboard mounted at /api/ui/. Composed here, so neither front end
    imports the other: both stand on `service`."""
    app = create_app(settings, clock=clock, store=store, queue=queue)
    mount_dashboard(app)
    return app


class Runtime:
    """One worker's scheduler: clients, and the work each trigger does."""

    def __init__(
        self,
        settings: Settings,
        *,
        clock: Clock = utc_now,
        sleep: Callable[[float], None] = time.sleep,
        action_adapters: Mapping[str, Any] | None = None,
    ) -> None:
        """`clock` and `sleep` (how the executor waits for an occurrence's exact second) are
        the real ones unless a test hands in its own; `action_adapters` go to every action
        (tests: a CA bundle, a Service Bus sender factory)."""
        policy_for(settings)  # a malformed SCHEDULER_EGRESS_ALLOW stops the worker here
        self.settings = settings
        self.clock = clock
        self.store = TableStore(settings, group_writes=True)  # the API builds its own
        self.queue = ExecutionQueue(settings)
        self.dispatch_queue = ExecutionQueue(settings, name=settings.dispatch_queue_name)
        self.metrics = MetricsRecorder(self.store, settings)
        self.dispatcher = Dispatcher(self.store, self.queue, settings, clock, observe=self.observe)
        adapters = {} if action_adapters is None else action_adapters
        self.executor = Executor(self.store, self.queue, settings, clock, sleep, adapters)
        self.notifier = Notifier(self.store, settings, clock, adapters)

    def observe(self, event: Event) -> None:
        """Where the dispatcher's and the executor's events go: the metrics, and the
        notifications (a small message on their queue; delivered by `notify`)."""
        self.metrics.observe(event)
        self.notifier.observe(event)

    def flush_metrics(self, *, due_only: bool = True) -> None:
        """Write this instance's counters to its row: when due (`FLUSH_EVERY`), or now.
        Never fails the trigger that calls it: the next flush tries again."""
        try:
            if due_only:
                self.metrics.flush_if_due(self.clock)
            else:
                self.metrics.flush(self.clock())
        except Exception:
            log.exception("metrics flush failed; the next one tries again")

    def keep_metrics_flushed(self, stop: threading.Event | None = None) -> threading.Thread:
        """A daemon thread flushing when due until `stop`, so that what an instance counted
        last reaches its row even if no trigger runs on it again (the hosts start it)."""
        stopped = stop or threading.Event()

        def loop() -> None:
            while not stopped.wait(FLUSH_EVERY.total_seconds()):
                self.flush_metrics()

        thread = threading.Thread(target=loop, name="metrics-flush", daemon=True)
        thread.start()
        return thread

    def ensure_storage(self) -> None:
        """Create tables and queues once per worker (idempotent, so racing workers are fine)."""
        self.store.ready()
        self.queue.ready()
        self.dispatch_queue.ready()
        self.notifier.queue.ready()

    @cached_property
    def api(self) -> FastAPI:
        """The HTTP API (FastAPI), built on first use, with clients of its own: a request
        gives up on unreachable storage within seconds (503), where a trigger waits longer."""
        return create_web_app(
            self.settings,
            clock=self.clock,
            store=TableStore(self.settings, patience=INTERACTIVE),
            queue=ExecutionQueue(self.settings, patience=INTERACTIVE),
        )

    def coordinate(self) -> CoordinatorReport:
        """The timer trigger: send one control message per due pair (a minute, its shards) to the
        dispatch queue, then the tick's upkeep."""
        self.ensure_storage()
        report = self.dispatcher.coordinate(self.dispatch_queue, now=self.clock())
        self.metrics.tick_completed()
        self.upkeep(report.now)
        return report

    def dispatch(self, body: str) -> PairResult | None:
        """The dispatch queue trigger: handle one pair (a minute, its shards). The shards of
        it another worker holds are sent again for when those leases end (if the holder died,
        that message takes the shard over); a malformed message is dropped (None)."""
        self.ensure_storage()
        try:
            # Each call its own lease holder: a worker runs several messages at once.
            result = self.dispatcher.pair(body, now=self.clock())
        except ValidationError:
            log.error("dropping a malformed dispatch control message: %.200s", body)
            return None
        if result.again is not None:
            wait = ((result.busy_until or self.clock()) - self.clock()).total_seconds()
            again = result.again.to_json()
            self.dispatch_queue.send_body(again, delay_seconds=max(1, math.ceil(wait)))
        self.flush_metrics()
        return result

    def drain_dispatch(self) -> list[PairResult]:
        """Handle every control message visible now, here, one after the other (what
        `tick` and tests use instead of the dispatch function)."""
        results: list[PairResult] = []
        while received := self.dispatch_queue.receive(max_messages=32, visibility_timeout=300):
            for message in received:
                result = self.dispatch(message.body)
                self.dispatch_queue.delete(message)
                if result is not None:
                    results.append(result)
        return results

    def tick(self) -> TickReport:
        """A whole dispatcher tick at the current time in this process: the coordinator's
        control messages, then each pair they name (`drain_dispatch`), then the upkeep."""
        self.ensure_storage()
        coordinated = self.dispatcher.coordinate(self.dispatch_queue, now=self.clock())
        self.metrics.tick_completed()
        report = combine_results(coordinated.now, self.drain_dispatch(), self.clock)
        self.upkeep(report.now)
        log.info(
            "dispatcher tick: %d due rows, %d sent in %d queue messages, %d postponed, "
            "%d stale, %.2fs",
            report.rows_read,
            report.messages_sent,
            report.queue_sends,
            report.postponed,
            report.stale_dropped,
            report.duration,
        )
        return report

    def upkeep(self, now: datetime) -> None:
        """What a tick does besides dispatching, each part bounded and never failing the
        tick: every `CHECK_EVERY_MINUTES` the overdue-job check (`anti_entropy`), a share
        of the background deletion of deleted jobs' history (`history_purge`), and the
        folding of stopped instances' metrics rows (`metrics.fold_stale`), the dead-man
        switch's passed deadlines (`notify`)."""
        try:
            if due_for_check(now):
                repair_jobs(self.store, now=now, grace_period=self.settings.grace_period)
            purge_histories(self.store, budget=TICK_BUDGET)
            fold_stale(self.store, now=now)
            self.notifier.judge_deadlines(now)  # the dead-man switch
        except Exception:
            log.exception("tick upkeep failed; the next tick tries again")

    def execute_queued(
        self, body: str, *, message_id: str, dequeue_count: int
    ) -> list[ExecutionReport]:
        """Execute every attempt one message of the execution queue carries (the queue
        trigger): one, or a batch's members at once (`Executor.handle_body`). Each member's
        report is observed; if any member raised, the others' are observed first, then the
        invocation fails (an ExceptionGroup) so that the host delivers the batch again."""
        self.ensure_storage()
        try:
            ended = self.executor.handle_body(
                body, message_id=message_id, dequeue_count=dequeue_count
            )
            reports = [report for report in ended if isinstance(report, ExecutionReport)]
            for report in reports:
                self._observe_execution(report)
        finally:
            self.flush_metrics()
        if failed := [error for error in ended if isinstance(error, Exception)]:
            raise ExceptionGroup(f"{len(failed)} of {len(ended)} attempts failed", failed)
        return reports

    def execute(self, body: str, *, message_id: str, dequeue_count: int) -> ExecutionReport:
        """Execute one lone execution message (tests and tools that hand in one at a time;
        the queue trigger calls `execute_queued`, which takes a batch as well)."""
        self.ensure_storage()
        report = self.executor.handle_message(
            ExecutionMessage.from_json(body), member_id=message_id, dequeue_count=dequeue_count
        )
        self._observe_execution(report)
        self.flush_metrics()
        return report

    def _observe_execution(self, report: ExecutionReport) -> None:
        for event in execution_events(report):
            self.observe(event)

    def record_poisoned(self, body: str, *, message_id: str) -> list[PoisonReport]:
        """Record a message from the poison queue in its job (the poison-queue trigger), each
        member of a batch in its own."""
        self.ensure_storage()
        reports = record_poisoned_body(self.store, body, message_id=message_id, now=self.clock())
        for event in (event for report in reports for event in poison_events(report)):
            self.observe(event)
        self.flush_metrics()
        return reports

    def notify(self, body: str) -> NotifyReport:
        """Deliver one notice from the notifications queue (its queue trigger)."""
        self.ensure_storage()
        return self.notifier.handle(body)

    def drain_notifications(self) -> list[NotifyReport]:
        """Handle every notice visible now, here (tests and the local host's loop)."""
        reports: list[NotifyReport] = []
        queue = self.notifier.queue
        while received := queue.receive(max_messages=32, visibility_timeout=300):
            for message in received:
                reports.append(self.notify(message.body))
                queue.delete(message)
        return reports

    def housekeeping(self) -> HousekeepingReport:
        """Prune history and delete long-ended jobs (the daily timer)."""
        self.ensure_storage()
        report = run_housekeeping(
            self.store, now=self.clock(), grace_period=self.settings.grace_period
        )
        self.notifier.purge(self.clock())
        log.info("housekeeping: %s", report)
        return report
