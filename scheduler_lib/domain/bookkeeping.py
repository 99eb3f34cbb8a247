"""A job's bookkeeping: what the dispatcher and the executor record beside its definition.

Typed here so no one reads it by string key; `from_stored`/`to_stored` (called by
`store/jobs.py` alone) convert from and to the stored JSON object, whose keys are the
constants below. The stored form is unchanged by the typing: a bookkeeping read and written
back gives the same JSON (keys sorted by the store), and older forms still read (a single
string for the sent occurrences; keys this version does not know are carried along untouched).

The executor's part (`executor`: its claims, the last occurrence it finished, when it ended
the job) is typed in `executor_state.py`, converted here with the rest; the rules that change
it are `execution/lifecycle.py`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from scheduler_lib.domain.executor_state import ExecutorState
from scheduler_lib.domain.json_values import JSONObject
from scheduler_lib.timeutil import iso_z

#: Stored key: how many occurrences the dispatcher has sent (numbered 1, 2, ...).
OCCURRENCES = "occurrences"
#: Stored key: how many of those the executor did not run because they would have started
#: later than the grace period (postponed). Like the dispatcher's own postponements, they do
#: not count toward `recurrence.count`, which counts executions.
NOT_RUN = "notRun"
#: Stored key: the dispatcher's record of a postponement in progress (the missed occurrence
#: and the history message), so a crash between its writes is finished by the next tick.
POSTPONED = "postponed"
#: Stored key: the executor's part (`ExecutorState`).
EXECUTOR = "executor"
#: Stored key: the occurrences the dispatcher sent lately (ISO 8601, ascending). It sends
#: up to a minute ahead and then advances `next_execution_time` past them, so an every-minute
#: job can have two in flight; until an occurrence's second it, not `next_execution_time`, is
#: the job's next execution. (Older entities hold one string: the latest sent.)
DISPATCHED = "dispatched"
_KNOWN = {OCCURRENCES, NOT_RUN, POSTPONED, EXECUTOR, DISPATCHED}
#: How long a sent occurrence is remembered after a later one is sent: far more than the
#: dispatcher's look-ahead (a tick sends at most through the end of the minute after the
#: next), so every occurrence dropped from the list has started by then.
_SENT_MEMORY = timedelta(minutes=5)


@dataclass(frozen=True)
class Postponement:
    """A postponement the dispatcher started: the first missed occurrence and the message of
    its history entry (written after the job is advanced, so a crash can leave it unwritten)."""

    due: datetime
    message: str


@dataclass(frozen=True)
class Bookkeeping:
    """The dispatcher's counters and records, and the executor's state (see module doc)."""

    occurrences: int = 0
    not_run: int = 0
    #: The occurrences recorded as sent, ascending (see `DISPATCHED`).
    sent: tuple[datetime, ...] = ()
    postponed: Postponement | None = None
    #: None until the executor first records something (the stored JSON has no `executor`).
    executor: ExecutorState | None = None
    #: Stored keys this version does not know: kept so a write never loses them.
    other: Mapping[str, Any] = field(default_factory=dict)

    @property
    def counted(self) -> int:
        """Occurrences that count toward `recurrence.count`: sent, less those postponed unrun."""
        return self.occurrences - self.not_run

    @property
    def ended_at(self) -> datetime | None:
        """When the executor finished the job (Completed or Faulted), if it did."""
        return self.executor.ended_at if self.executor is not None else None

    def with_sent(self, due: datetime) -> Bookkeeping:
        """Once `due` is sent: counted, and remembered among the sent occurrences; those
        older than `_SENT_MEMORY` before it are forgotten (they have started), so the list
        stays a handful of entries."""
        kept = {t for t in self.sent if t >= due - _SENT_MEMORY} | {due}
        return replace(self, occurrences=self.occurrences + 1, sent=tuple(sorted(kept)))

    @classmethod
    def from_stored(cls, stored: Mapping[str, Any]) -> Bookkeeping:
        """The bookkeeping of a stored JSON object (any form ever written)."""
        sent = stored.get(DISPATCHED)
        values = [sent] if isinstance(sent, str) else sent if isinstance(sent, list) else []
        marker = stored.get(POSTPONED)
        executor = stored.get(EXECUTOR)
        postponed = None
        if isinstance(marker, dict) and isinstance(marker.get("due"), str):
            postponed = Postponement(
                datetime.fromisoformat(marker["due"]), str(marker.get("message", ""))
            )
        return cls(
            occurrences=int(stored.get(OCCURRENCES, 0) or 0),
            not_run=int(stored.get(NOT_RUN, 0) or 0),
            sent=tuple(sorted(datetime.fromisoformat(v) for v in values if isinstance(v, str))),
            postponed=postponed,
            executor=ExecutorState.from_stored(executor) if executor else None,
            other={k: v for k, v in stored.items() if k not in _KNOWN},
        )

    def to_stored(self) -> JSONObject:
        """The stored JSON object; a value at its default is left out, as it always was
        (`occurrences` excepted: every job the API creates has it, zero or not)."""
        stored: JSONObject = {**self.other, OCCURRENCES: self.occurrences}
        if self.not_run:
            stored[NOT_RUN] = self.not_run
        if self.sent:
            stored[DISPATCHED] = [iso_z(t) for t in self.sent]
        if self.postponed is not None:
            stored[POSTPONED] = {
                "due": iso_z(self.postponed.due),
                "message": self.postponed.message,
            }
        if self.executor is not None:
            stored[EXECUTOR] = self.executor.to_stored()
        return stored
