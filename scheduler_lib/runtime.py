"""The composition root shared by `function_app.py` and the local host.

It builds the long-lived clients once per worker (settings, table store, execution queue),
makes sure the tables and queues exist, and exposes one method per trigger. Both hosts
call exactly these methods, so what runs locally is what runs in Azure.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from functools import cached_property
from typing import Any

from fastapi import FastAPI

from scheduler_lib.actions.egress import policy_for
from scheduler_lib.api import create_app
from scheduler_lib.config import Settings
from scheduler_lib.dispatch import Dispatcher, TickReport, due_for_check, repair_jobs
from scheduler_lib.execution import (
    ExecutionQueue,
    ExecutionReport,
    Executor,
    PoisonReport,
    record_poisoned,
)
from scheduler_lib.housekeeping import HousekeepingReport, run_housekeeping
from scheduler_lib.storage_patience import INTERACTIVE
from scheduler_lib.store import TICK_BUDGET, TableStore, purge_histories
from scheduler_lib.timeutil import Clock, utc_now

log = logging.getLogger("scheduler")


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
        self.store = TableStore(settings)
        self.queue = ExecutionQueue(settings)
        self.dispatcher = Dispatcher(self.store, self.queue, settings, clock)
        adapters = {} if action_adapters is None else action_adapters
        self.executor = Executor(self.store, self.queue, settings, clock, sleep, adapters)

    def ensure_storage(self) -> None:
        """Create tables and queues once per worker (idempotent, so racing workers are fine)."""
        self.store.ready()
        self.queue.ready()

    @cached_property
    def api(self) -> FastAPI:
        """The HTTP API (FastAPI), built on first use, with clients of its own: a request
        gives up on unreachable storage within seconds (503), where a trigger waits longer."""
        return create_app(
            self.settings,
            clock=self.clock,
            store=TableStore(self.settings, patience=INTERACTIVE),
            queue=ExecutionQueue(self.settings, patience=INTERACTIVE),
        )

    def tick(self) -> TickReport:
        """One dispatcher tick at the current time (the timer trigger), then its upkeep."""
        self.ensure_storage()
        report = self.dispatcher.tick(now=self.clock())
        self.upkeep(report.now)
        log.info(
            "dispatcher tick: %d due rows, %d sent, %d postponed, %d stale, %.2fs",
            report.rows_read,
            report.messages_sent,
            report.postponed,
            report.stale_dropped,
            report.duration,
        )
        return report

    def upkeep(self, now: datetime) -> None:
        """What a tick does besides dispatching, each part bounded and never failing the
        tick: every `CHECK_EVERY_MINUTES` the overdue-job check (`anti_entropy`), and a share
        of the background deletion of deleted jobs' history (`history_purge`)."""
        try:
            if due_for_check(now):
                repair_jobs(self.store, now=now, grace_period=self.settings.grace_period)
            purge_histories(self.store, budget=TICK_BUDGET)
        except Exception:
            log.exception("tick upkeep failed; the next tick tries again")

    def execute(self, body: str, *, message_id: str, dequeue_count: int) -> ExecutionReport:
        """Execute one message from the execution queue (the queue trigger)."""
        self.ensure_storage()
        return self.executor.handle(body, message_id=message_id, dequeue_count=dequeue_count)

    def record_poisoned(self, body: str, *, message_id: str) -> PoisonReport:
        """Record a message from the poison queue in its job (the poison-queue trigger)."""
        self.ensure_storage()
        return record_poisoned(self.store, body, message_id=message_id, now=self.clock())

    def housekeeping(self) -> HousekeepingReport:
        """Prune history and delete long-ended jobs (the daily timer)."""
        self.ensure_storage()
        report = run_housekeeping(
            self.store, now=self.clock(), grace_period=self.settings.grace_period
        )
        log.info("housekeeping: %s", report)
        return report
