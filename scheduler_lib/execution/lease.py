"""A claim's lease: how a worker that died mid-attempt is noticed within seconds.

A queue message taken by a worker that dies stays hidden for the queue trigger's visibility
timeout: the Functions host dequeues with 10 minutes (renewed while the function runs) and
deletes the message with its pop receipt when the function returns, so the function cannot
shorten that from inside (changing the message's visibility would change its pop receipt
and break the host's delete). At-least-once held, but the attempt ran again 5-10 minutes
late, a stale duplicate long after the fact. So the attempt watches itself, through state
and messages of its own:

- Its claim carries a lease (`Claim.lease_until`, `LEASE` from the claim,
  `lifecycle.lease_from`), which the worker renews every `HEARTBEAT` seconds while the
  attempt runs (`heartbeat.Heartbeat`) and which is cleared when the step is done.
- With the claim it sends a watchdog message (`ExecutionMessage.watching`), visible just
  after the lease would run out, and deletes it again when the attempt ends normally, so
  most attempts never see it delivered. An occurrence delivered early sends it before its
  wait and is claimed at its second (`before_claim`): a watchdog that finds no claim of
  its occurrence at all runs it as a delivery of its own (its worker died in the wait).
  With `SCHEDULER_WATCHDOG=heartbeat` it is sent with the first renewal instead, by an
  attempt still running then (`heartbeat`), and none watches an early occurrence's wait.
  A batch's members share one watchdog message (`batch_watchdog.BatchWatchdog`), sent before
  any of them claims (`before_claim`) and deleted once all of them ended. While the worker
  lives, each beat keeps its watchdog hidden past the lease it renewed (`watchdog`), so a
  watchdog is delivered only once its worker stopped beating (an instance that died
  holding a delivered watchdog hid it for the trigger's 10 minutes).
- A watchdog that is delivered (`watchdog.look`) finds the step done (nothing to do), its
  lease still running (it comes back when that ends), or expired. An expired lease is
  confirmed first: the watchdog comes back `CONFIRM` later, and takes the attempt over only
  if the lease is still the one it saw, unrenewed through two heartbeats. A living worker
  cut off from storage for a while (an outage: neither its heartbeat nor the watchdog gets
  through) renews before then, so it is never taken over; clocks a little apart do not
  matter either, since only the lease's value is compared. The takeover is a claim of the
  same step under the watchdog's message id, conditional on that lease (`Takeover`), and
  runs the attempt again ("Rerun", same execution tag, its history entry marked `[Rerun]`).
- The original message, when the queue gives it back minutes later, finds the step taken
  by another message (or done): a Duplicate.

Bound: a worker that dies is taken over `LEASE` + `CONFIRM` (+ a whole second of queue
delay and the trigger's polling) after its last heartbeat, about 20 s. A step taken over
`MAX_TAKEOVERS` times (an attempt whose invocation fails however often it runs) is left to
the queue's own redelivery and poison handling, as is a worker that dies in the moment
between writing its claim and sending the watchdog, and one whose wait for its second
overran its watchdog's visibility (~11 s) with no beat getting through (its heartbeat
thread starved too) so that the watchdog, finding it unclaimed, was spent as a Duplicate
of the claim the worker then wrote. A worker that dies in that wait is run by its watchdog
~11 s after its last beat or the second, whichever is later (no lease to confirm). With
`heartbeat`, a worker that dies before the first renewal (`HEARTBEAT` after the claim) is
left to the queue's redelivery (10 minutes in Azure): a Rerun if it had claimed, and if it
died in an early occurrence's wait (nothing claimed), a delivery later than the grace
period: Postponed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from scheduler_lib.domain import Claim

#: How long a claim holds without renewal.
LEASE = timedelta(seconds=10)
#: Seconds between renewals while the attempt runs: three fit in a lease.
HEARTBEAT = 3.0
#: How long a watchdog waits, after it saw an expired lease, before it takes the attempt
#: over: two heartbeats and a second, so a worker that is alive has renewed by then.
CONFIRM = timedelta(seconds=2 * HEARTBEAT + 1)
#: After the lease's end, before the watchdog looks (the queue counts whole seconds).
MARGIN = timedelta(seconds=1)
#: Takeovers of one step before it is left to the queue's redelivery (and poison queue).
MAX_TAKEOVERS = 4


@dataclass(frozen=True)
class Takeover:
    """A watchdog's claim on an attempt whose lease expired: valid only while the step is
    still held under `message_id` with exactly that `lease_until` (nobody renewed it)."""

    message_id: str
    lease_until: datetime

    def matches(self, claim: Claim) -> bool:
        return claim.message_id == self.message_id and claim.lease_until == self.lease_until


def held(claim: Claim | None) -> bool:
    """Whether `claim` is a step still in progress under a lease (one written before leases
    existed has none, and is left to the queue's redelivery as it always was)."""
    if claim is None or claim.done or claim.final:
        return False
    return claim.lease_until is not None
