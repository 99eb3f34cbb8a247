"""The executor's part of a job's bookkeeping: its claims, the last occurrence it finished,
when it finished the job, and what its last history entry left the history counter at
(`HistoryCounter`: the next entry is written without reading it).

Typed here so no one reads it by string key; `from_stored`/`to_stored` (reached only through
`Bookkeeping`, which `store/jobs.py` alone converts) hold the stored JSON's keys. The stored
form is unchanged by the typing: times are written as `isoformat()` (`+00:00`, as they always
were; they are not shown to anyone), a flag the executor sets only on some claims
(`abandoned`, `postponed`) is written only when set, a claim written before `claimedAt`
existed stays without it, a claim's lease (`leaseUntil`, `takeovers`) is written only while
it has one, and keys this version does not know are carried along.
`execution/lifecycle.py` holds the rules that change it; the readers at the end (a job's
state, the claim of a message's step) are here so that the executor's decisions
(`execution/decide.py`) and its rules read it alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from scheduler_lib.domain.history_counter import HistoryCounter
from scheduler_lib.domain.json_values import JSONObject
from scheduler_lib.domain.messages import ERROR_ACTION

if TYPE_CHECKING:  # only annotations: jobs.py imports this module (through bookkeeping.py)
    from scheduler_lib.domain.jobs import JobRecord
    from scheduler_lib.domain.messages import ExecutionMessage

#: The claim's own keys (stored JSON); any other key of a stored claim is kept in `other`.
_CLAIM_KEYS = {
    "action", "attempt", "messageId", "number", "manual", "done", "final", "faulted", "at",
    "claimedAt", "abandoned", "postponed", "leaseUntil", "takeovers",
}  # fmt: skip
_STATE_KEYS = {"claims", "lastFinished", "endedAt", "buffered", "history"}


@dataclass(frozen=True)
class Claim:
    """The furthest step of one execution tag (an occurrence, or a manual run) that a worker
    took: which action and attempt, under which queue message, and how far it got."""

    action: str  # MainAction or ErrorAction
    attempt: int  # retries of that action before this one
    message_id: str  # the queue message the step was taken under (a redelivery keeps it)
    number: int  # the occurrence's number (1-based), 0 for a manual run
    manual: bool
    #: When the step was last changed (claimed, done, made final): finished claims expire by it.
    at: datetime
    #: When the step was first claimed (its attempt started then); None on claims written
    #: before it was recorded, which read it as `at`.
    claimed_at: datetime | None = None
    done: bool = False  # the attempt's history is written and its follow-up sent
    final: bool = False  # the occurrence has no further attempt
    faulted: bool = False  # the occurrence's main action exhausted its retries
    abandoned: bool = False  # made final without running: its job was no longer Enabled
    postponed: bool = False  # made final without running: it would have started too late
    #: Until when the worker running the step holds it (`execution/lease.py`): renewed while
    #: the action runs, cleared when the step is done; None on claims written before leases.
    lease_until: datetime | None = None
    takeovers: int = 0  # times a watchdog took the step over from a worker that stopped
    other: Mapping[str, Any] = field(default_factory=dict)

    @property
    def started(self) -> datetime:
        """When the step was first claimed."""
        return self.claimed_at or self.at

    @classmethod
    def from_stored(cls, stored: Mapping[str, Any]) -> Claim:
        claimed_at = stored.get("claimedAt")
        lease = stored.get("leaseUntil")
        return cls(
            action=stored["action"],
            attempt=stored["attempt"],
            message_id=stored.get("messageId", ""),
            number=stored.get("number", 0),
            manual=bool(stored.get("manual")),
            at=datetime.fromisoformat(stored["at"]),
            claimed_at=datetime.fromisoformat(claimed_at) if claimed_at else None,
            done=bool(stored.get("done")),
            final=bool(stored.get("final")),
            faulted=bool(stored.get("faulted")),
            abandoned=bool(stored.get("abandoned")),
            postponed=bool(stored.get("postponed")),
            lease_until=datetime.fromisoformat(lease) if lease else None,
            takeovers=int(stored.get("takeovers") or 0),
            other={k: v for k, v in stored.items() if k not in _CLAIM_KEYS},
        )

    def to_stored(self) -> JSONObject:
        stored: JSONObject = {
            **self.other,
            "action": self.action,
            "attempt": self.attempt,
            "messageId": self.message_id,
            "number": self.number,
            "manual": self.manual,
            "done": self.done,
            "final": self.final,
            "faulted": self.faulted,
            "at": self.at.isoformat(),
        }
        if self.claimed_at is not None:
            stored["claimedAt"] = self.claimed_at.isoformat()
        if self.abandoned:
            stored["abandoned"] = True
        if self.postponed:
            stored["postponed"] = True
        if self.lease_until is not None:
            stored["leaseUntil"] = self.lease_until.isoformat()
        if self.takeovers:
            stored["takeovers"] = self.takeovers
        return stored


@dataclass(frozen=True)
class LastFinished:
    """The last scheduled occurrence that ended while it was the latest one dispatched: the
    job is Completed or Faulted by it once nothing follows."""

    number: int
    tag: str
    faulted: bool


@dataclass(frozen=True)
class ExecutorState:
    """The executor's state beside a job (see module doc)."""

    #: Execution tag -> its claim. Never changed in place: a change makes a new mapping.
    claims: Mapping[str, Claim] = field(default_factory=dict)
    last_finished: LastFinished | None = None
    #: When the executor finished the job (Completed or Faulted): housekeeping deletes it
    #: 60 days later.
    ended_at: datetime | None = None
    #: The execution message of an occurrence waiting for the running one to end (a job's
    #: overlap policy BufferOne; `execution/overlap.py`), at most one.
    buffered: str | None = None
    #: The job's history counter as the executor's last entry left it (`HistoryCounter`):
    #: the next entry is written without reading it. None: not known (read it).
    history: HistoryCounter | None = None
    #: Stored keys this version does not know: kept so a write never loses them.
    other: Mapping[str, Any] = field(default_factory=dict)

    def running(self, *, besides: str) -> bool:
        """Whether a scheduled occurrence other than the tag `besides` is still running: its
        claim is not final (an attempt in flight, or a retry or its errorAction still to
        come). Manual runs do not count."""
        return any(not c.final and not c.manual for tag, c in self.claims.items() if tag != besides)

    @classmethod
    def from_stored(cls, stored: Mapping[str, Any]) -> ExecutorState:
        last = stored.get("lastFinished")
        ended = stored.get("endedAt")
        history = stored.get("history")
        return cls(
            claims={tag: Claim.from_stored(c) for tag, c in (stored.get("claims") or {}).items()},
            last_finished=(
                LastFinished(last.get("number", 0), last.get("tag", ""), bool(last.get("faulted")))
                if isinstance(last, dict)
                else None
            ),
            ended_at=datetime.fromisoformat(ended) if isinstance(ended, str) and ended else None,
            buffered=stored.get("buffered") or None,
            history=HistoryCounter.from_stored(history) if isinstance(history, dict) else None,
            other={k: v for k, v in stored.items() if k not in _STATE_KEYS},
        )

    def to_stored(self) -> JSONObject:
        stored: JSONObject = {
            **self.other,
            "claims": {tag: claim.to_stored() for tag, claim in self.claims.items()},
        }
        if self.last_finished is not None:
            last = self.last_finished
            stored["lastFinished"] = {
                "number": last.number,
                "tag": last.tag,
                "faulted": last.faulted,
            }
        if self.ended_at is not None:
            stored["endedAt"] = self.ended_at.isoformat()
        if self.buffered is not None:
            stored["buffered"] = self.buffered
        if self.history is not None:
            stored["history"] = self.history.to_stored()
        return stored


def executor_state(record: JobRecord) -> ExecutorState:
    """The executor's bookkeeping of `record` (empty before its first claim)."""
    return record.bookkeeping.executor or ExecutorState()


def step_order(action: str, attempt: int) -> tuple[int, int]:
    """Order of an occurrence's attempts: main action 0..n, then errorAction 0..n."""
    return (1 if action == ERROR_ACTION else 0, attempt)


def same_step(claim: Claim | None, message: ExecutionMessage) -> bool:
    return claim is not None and step_order(claim.action, claim.attempt) == step_order(
        message.action, message.attempt
    )


def step_claim(record: JobRecord, message: ExecutionMessage) -> Claim | None:
    """The claim of `message`'s tag if it is at `message`'s very step."""
    claim = executor_state(record).claims.get(message.execution_tag)
    return claim if same_step(claim, message) else None


def claimed_at(record: JobRecord, message: ExecutionMessage) -> datetime | None:
    """When `message`'s step was first claimed (its attempt started then), if it is claimed."""
    claim = step_claim(record, message)
    return claim.started if claim is not None else None
