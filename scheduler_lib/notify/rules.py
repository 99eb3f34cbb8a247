"""Which notices an event of the dispatcher or the executor makes (pure: no storage).

- `Failed`: an occurrence's main action failed after its retries (`Faulted` outcome) or its
  message was poisoned. The notice carries the streak before it, so the worker sends it once
  per failing streak (the first) unless a subscription asks for `everyFailure`.
- `Recovered`: the first success after a faulted streak. Its id is made of the success's
  end, as the dead-man switch's own recovery of the same success is, so both are one notice.
- `Paused`: stop-after-failures (`JobDefinition.pause_after`) disabled the job. `Faulted`:
  the job became Faulted.
- `Postponed`: occurrences missed by downtime (the dispatcher) or that would have started
  past the grace period (the executor). After a downtime every job may say so many times:
  the worker sends one per job per `POSTPONED_QUIET` (`store.take_quiet_window`).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from scheduler_lib.domain.outcomes import Event, OccurrenceEnded
from scheduler_lib.domain.vocabulary import JobState, Outcome
from scheduler_lib.notify.notice import Notice, make_notice
from scheduler_lib.timeutil import iso_z
from scheduler_lib.wire.notifications import NotificationEvent as E

POSTPONED_QUIET = timedelta(hours=1)


def notices_of(event: Event, now: datetime) -> list[Notice]:
    """The notices `event` makes at `now` (most events make none)."""
    if not isinstance(event, OccurrenceEnded):
        return []
    key, tag, turn = event.job_key, event.execution_tag, event.turn
    at = event.ended or now
    found: list[Notice] = []
    if event.outcome in (Outcome.FAULTED, Outcome.POISONED):
        streak = turn.streak_before if turn else -1
        how = "was poisoned" if event.outcome is Outcome.POISONED else "failed after its retries"
        detail = f"An occurrence {how}" + (f" ({turn.streak_after} in a row)." if turn else ".")
        found.append(make_notice(E.FAILED, key, tag or iso_z(at), at, detail, streak_before=streak))
    if turn is not None:
        if event.outcome is Outcome.COMPLETED and turn.streak_before > turn.streak_after == 0:
            detail = f"Succeeded after {turn.streak_before} faulted occurrence(s)."
            found.append(recovered(key, at, detail))
        if turn.paused:
            detail = f"Disabled after {turn.streak_after} faulted occurrences in a row."
            found.append(make_notice(E.PAUSED, key, tag, at, detail))
        if turn.state_after == JobState.FAULTED and turn.state_before != JobState.FAULTED:
            found.append(make_notice(E.FAULTED, key, tag, at, "The job is Faulted."))
    if event.outcome in (Outcome.POSTPONED, Outcome.MISSED):
        detail = (
            "Occurrences were missed while the scheduler was down."
            if event.outcome is Outcome.MISSED
            else "An occurrence would have started past the grace period."
        )
        found.append(make_notice(E.POSTPONED, key, tag or iso_z(now), now, detail))
    return found


def recovered(job_key: str, success_ended: datetime, detail: str) -> Notice:
    """The `Recovered` notice of the success that ended at `success_ended`."""
    return make_notice(E.RECOVERED, job_key, iso_z(success_ended), success_ended, detail)
