"""A delivered watchdog message (`lease`): look at the attempt it watches, and either leave
it (done, or still renewed), come back later, or hand it to the executor to take over.

A watchdog sent before its attempt was claimed (`before_claim`: an occurrence delivered
early is claimed at its second, after the wait) may find no claim of its occurrence at all:
its worker died in the wait. That attempt is handed to the executor as a delivery of its
own (`Look.unclaimed`), claimed under the watchdog's message id and run as any late
delivery is (the grace period applies); a worker still alive that claims at the same
moment loses the conditional write, or wins it and the watchdog's claim is the Duplicate.
"Over" stays recognisable: a claimed step keeps its claim when done (`lifecycle`), final
claims for a day, so a claim of the occurrence at this step or beyond means it was taken.

Every look that does not take over ends the watchdog's own message; one that comes back
sends a new watchdog, so a step has at most one in the queue at a time besides the one its
worker sent (which that worker deletes when the attempt ends).

A batch's watchdog (`batch_watchdog.BatchWatchdog`: one message for all its members, each
`before_claim`) is delivered as a batch: the executor looks at each member here as at a
lone watchdog, under its member id (`messages.member_id`), so a member's takeover or its
unclaimed run is claimed by that id, and a member that comes back later sends a lone
watchdog of its own: the batch's message is spent once.

The worker's side of the message (`heartbeat.Watchdog`, `batch_watchdog.BatchWatchdog`): sent at
most once, visible just after the lease of a claim taken now or at the second it waits for,
and **kept hidden while the worker lives** (`store.kept_message`): each heartbeat, or the
batch's own beat, pushes its visibility past the lease it just renewed, so a watchdog is
delivered only once its worker stopped beating. Before, it was delivered while the worker
lived too (at the lease's first end) and watched on as a chain of messages, one every
lease, each taken by any instance: one that died holding a link (taken, not yet looked
at) hid that attempt's watchdog for the queue trigger's 10 minutes, and its worker, dying
too, was not taken over within seconds. The chain is still what a look that finds the
lease held starts (a beat that did not get through, a worker starved of CPU): the worker
then finds its message taken (`KeptMessage.taken`) and stops keeping it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from scheduler_lib.domain.executor_state import executor_state, step_claim
from scheduler_lib.domain.messages import ExecutionMessage
from scheduler_lib.execution import lease
from scheduler_lib.store import TableStore, find_job
from scheduler_lib.store.execution_queue import ExecutionQueue
from scheduler_lib.timeutil import iso_z


@dataclass(frozen=True)
class Look:
    """What a watchdog found: "Watched" (nothing to do), "Watching" (it comes back later),
    or a `takeover` of the attempt for the executor to claim and run again, or an
    `unclaimed` attempt for the executor to claim and run as a delivery of its own."""

    disposition: str
    reason: str
    takeover: lease.Takeover | None = None
    unclaimed: bool = False


def look(
    store: TableStore, queue: ExecutionQueue, watchdog: ExecutionMessage, *, now: datetime
) -> Look:
    """Look at the attempt `watchdog` watches (see the module)."""
    attempt = watchdog.watched()
    record = find_job(store, attempt.job_key)
    if record is None or not attempt.belongs_to(record.incarnation):
        return Look("Watched", "the job no longer exists")
    if watchdog.before_claim and attempt.execution_tag not in executor_state(record).claims:
        return Look("Claim", "its worker stopped before claiming it", unclaimed=True)
    claim = step_claim(record, attempt)
    if claim is None or not lease.held(claim) or claim.lease_until is None:
        return Look("Watched", "the attempt is over")
    if claim.takeovers >= lease.MAX_TAKEOVERS:
        why = f"taken over {claim.takeovers} times: left to the queue's redelivery"
        return Look("Watched", why)
    until = iso_z(claim.lease_until)
    if claim.lease_until > now:
        again = claim.lease_until + lease.MARGIN
        queue.send(attempt.watching(), visible_at=again, now=now)
        return Look("Watching", f"its worker holds it until {until}")
    seen = claim.lease_until.isoformat()  # exact: a renewal always changes it
    if watchdog.lease_seen != seen:
        queue.send(attempt.watching(lease_seen=seen), visible_at=now + lease.CONFIRM, now=now)
        return Look("Watching", f"its lease ended at {until}: taken over unless renewed soon")
    return Look("TakeOver", "", lease.Takeover(claim.message_id, claim.lease_until))
