"""The notification worker: one notice from the notifications queue, delivered to each
subscription that wants it, recorded, and retried on its own schedule.

Off the executor's path: the executor and the dispatcher only put a small message on the
queue (`Notifier`); reading the job and its collection, formatting, the HTTP calls and the
record all happen here, in the notifications queue's own function.

- Idempotent: the notice's record (`store.open_notice`, one row per notice id) says which
  subscriptions were already told; a notice handled again sends only what is still pending.
- Retried: a delivery that fails (a non-2xx answer, a refused or unreachable host) is tried
  again by sending the notice again, delayed `BACKOFF[round]`, up to `MAX_ROUNDS` deliveries
  in all (about 42 minutes); then the record says `GaveUp`. A subscription changed
  meanwhile is matched by its URL; one removed is not tried again.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from scheduler_lib.config import Settings
from scheduler_lib.domain import CollectionRecord, JobRecord
from scheduler_lib.errors import NotFoundError, ValidationError
from scheduler_lib.notify import formats
from scheduler_lib.notify.deliver import send
from scheduler_lib.notify.notice import Notice
from scheduler_lib.notify.rules import POSTPONED_QUIET
from scheduler_lib.notify.subscriptions import key, subscriptions, target, wants
from scheduler_lib.store import (
    DeliveryStatus,
    NoticeDelivery,
    NoticeRecord,
    TableStore,
    find_job,
    get_collection,
    open_notice,
    save_notice,
    take_quiet_window,
)
from scheduler_lib.store.execution_queue import ExecutionQueue
from scheduler_lib.timeutil import iso_z
from scheduler_lib.wire import deadman
from scheduler_lib.wire.notifications import NotificationEvent as E

log = logging.getLogger("scheduler.notify")

BACKOFF = (
    timedelta(seconds=30),
    timedelta(minutes=2),
    timedelta(minutes=10),
    timedelta(minutes=30),
)
MAX_ROUNDS = len(BACKOFF) + 1


@dataclass(frozen=True)
class NotifyReport:
    """What became of one notice: Sent, Retrying, Suppressed, Unsubscribed or Dropped."""

    disposition: str
    delivered: int = 0
    failed: int = 0


@dataclass(frozen=True)
class NotificationWorker:
    store: TableStore
    queue: ExecutionQueue  # the notifications queue (retries go back on it)
    settings: Settings
    adapters: Mapping[str, Any]

    def handle(self, body: str, *, now: datetime) -> NotifyReport:
        try:
            notice = Notice.from_json(body)
        except ValidationError:
            log.error("dropping a malformed notice: %.200s", body)
            return NotifyReport("Dropped")
        job = find_job(self.store, notice.job_key)
        if job is None:
            return NotifyReport("Dropped")
        collection = _collection(self.store, job)
        if notice.event == E.RECOVERED and job.overdue_since is not None:
            # The dead-man switch clears Overdue and sends the one Recovered itself.
            return NotifyReport("Suppressed")
        wanted = [
            s
            for s in subscriptions(job, collection)
            if wants(s, notice.event, notice.streak_before)
        ]
        if not wanted:
            return NotifyReport("Unsubscribed")
        if notice.event == E.POSTPONED and not take_quiet_window(
            self.store, job.key, notice.event, owner=notice.notice_id, now=notice.time,
            window=POSTPONED_QUIET,
        ):  # fmt: skip
            return NotifyReport("Suppressed")
        record = open_notice(
            self.store, NoticeRecord(job.key, notice.notice_id, notice.event, notice.time,
                                     notice.detail),
        )  # fmt: skip
        done = {d.key: d for d in record.deliveries}
        updates: dict[str, NoticeDelivery] = {}
        for subscription in wanted:
            previous = done.get(key(subscription))
            if previous is not None and previous.settled:
                continue
            updates[key(subscription)] = self._deliver(subscription, notice, job, previous, now)
        self._record(record, updates)
        failed = sum(1 for u in updates.values() if u.status is DeliveryStatus.FAILED)
        delivered = sum(1 for u in updates.values() if u.status is DeliveryStatus.DELIVERED)
        if failed:
            delay = BACKOFF[min(notice.round, len(BACKOFF) - 1)]
            self.queue.send_body(
                notice.next_round().to_json(), delay_seconds=int(delay.total_seconds())
            )
            return NotifyReport("Retrying", delivered, failed)
        return NotifyReport("Sent", delivered, len(updates) - delivered)

    def _deliver(
        self,
        subscription: Mapping[str, Any],
        notice: Notice,
        job: JobRecord,
        previous: NoticeDelivery | None,
        now: datetime,
    ) -> NoticeDelivery:
        names = (job.subscription_id, job.resource_group, job.collection_name, job.name)
        payload = formats.body(notice, subscription["format"], names, deadman.health(job))
        sent = send(
            subscription, notice, payload, names, self.settings, now=now, adapters=self.adapters
        )
        attempts = (previous.attempts if previous else 0) + 1
        status = DeliveryStatus.DELIVERED if sent.succeeded else DeliveryStatus.FAILED
        if not sent.succeeded and notice.round + 1 >= MAX_ROUNDS:
            status = DeliveryStatus.GAVE_UP
        log.info(
            "notification %s to %s: %s", notice.notice_id, target(subscription), status,
            extra={"job": notice.job_key},
        )  # fmt: skip
        return NoticeDelivery(
            key=key(subscription),
            target=target(subscription),
            format=subscription["format"],
            status=status,
            attempts=attempts,
            status_code=sent.status_code,
            message="" if sent.succeeded else sent.message,
            at=iso_z(now),
        )

    def _record(self, record: NoticeRecord, updates: dict[str, NoticeDelivery]) -> None:
        """Merge `updates` into the record, again on a fresh read if another worker wrote
        it meanwhile (a few times; a record left behind only shows less)."""
        current: NoticeRecord | None = record
        for _ in range(3):
            if current is None:
                current = open_notice(self.store, record)
            merged = {d.key: d for d in current.deliveries}
            merged.update(updates)
            saved = save_notice(self.store, replace(current, deliveries=tuple(merged.values())))
            if saved is not None:
                return
            current = None
        log.warning("notification record %s not updated: contention", record.notice_id)


def _collection(store: TableStore, job: JobRecord) -> CollectionRecord | None:
    try:
        return get_collection(store, job.subscription_id, job.resource_group, job.collection_name)
    except NotFoundError:
        return None
