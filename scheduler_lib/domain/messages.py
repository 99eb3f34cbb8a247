"""The execution message: what the dispatcher (and `POST .../run`) hands the executor.

One message per (job, occurrence, action, attempt). It carries no part of the job
definition, so a job changed or deleted after dispatch is read fresh by the executor, and
no secret ever sits in a queue.

A queue message may also carry a *batch* of them (`batch_json`, `parse_body`): occurrences
that start in the same second share one queue message, so they share its send, its delete,
its function execution and its early-delivery hold (docs/cost.md). Each member is the same
attempt as if sent alone; its claim names it by `member_id` (the queue message's id and its
place in the batch), stable across redeliveries of the batch as a lone message's id is.
A batch's members share one watchdog message too, itself a batch of each member's
`watching` message (`execution/heartbeat.py`).
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from datetime import UTC, datetime, timedelta

from scheduler_lib.domain.json_values import JSONObject
from scheduler_lib.errors import ValidationError

MAIN_ACTION = "MainAction"
ERROR_ACTION = "ErrorAction"
VERSION = 1


CATCH_UP = "CatchUp"
BACKFILL = "Backfill"


@dataclass(frozen=True)
class ExecutionMessage:
    """One attempt of one action of one occurrence of one job."""

    job_key: str
    occurrence: datetime  # the expected execution time (aware UTC)
    execution_tag: str  # unique per occurrence, the same across its retries
    occurrence_number: int = 0  # 1-based number of a scheduled occurrence; 0 for a manual run
    action: str = MAIN_ACTION
    attempt: int = 0  # retries of this action so far (0 = first try)
    manual: bool = False
    #: The incarnation of the job it was sent for (`JobRecord.incarnation`; empty from older
    #: senders): a job deleted and created again under the same name does not run, or record
    #: history for, what was queued for its predecessor.
    incarnation: str = ""
    #: Whole seconds the occurrence starts after `occurrence` (its job's jitter; see
    #: `schedule.jitter`); the tag and the history keep naming `occurrence`.
    jitter_seconds: int = 0
    #: Sent when the occurrence it waited for ended (the overlap policy BufferOne): it starts
    #: as soon as delivered and is never judged late.
    buffered: bool = False
    #: A late run on purpose (`CATCH_UP` after downtime, a job's missed-run policy; `BACKFILL`,
    #: `POST .../backfill`): sent as a manual run with the occurrence's own tag, and marked
    #: so in its history entries.
    catch_up: str = ""
    #: A watchdog of this attempt, not the attempt itself (`execution/watchdog.py`): sent
    #: when the attempt is claimed, it takes the attempt over if the claim's lease expires
    #: unrenewed (its worker stopped).
    watchdog: bool = False
    #: The expired lease (ISO) a watchdog saw on its previous visit: it takes the attempt
    #: over only if the lease is still that one (no heartbeat renewed it meanwhile).
    lease_seen: str = ""
    #: A watchdog sent before its attempt was claimed: an occurrence delivered early is
    #: claimed at its second, after the wait, so a worker that dies in the wait leaves no
    #: claim; such a watchdog runs the attempt if it finds it never claimed.
    before_claim: bool = False

    @classmethod
    def scheduled(
        cls,
        job_key: str,
        occurrence: datetime,
        occurrence_number: int,
        incarnation: str = "",
        *,
        start: datetime | None = None,
    ) -> ExecutionMessage:
        """A scheduled occurrence (`start`: when it starts, if later than `occurrence`). Its
        tag is derived from the job and the occurrence, so a tick that runs twice produces
        the same message and the executor can tell."""
        occurrence = occurrence.astimezone(UTC)
        digest = hashlib.sha256(f"{job_key}|{occurrence.isoformat()}".encode()).hexdigest()
        jitter = int((start - occurrence).total_seconds()) if start is not None else 0
        return cls(
            job_key, occurrence, digest[:32], occurrence_number, incarnation=incarnation,
            jitter_seconds=max(jitter, 0),
        )  # fmt: skip

    @classmethod
    def manual_run(cls, job_key: str, *, now: datetime, incarnation: str = "") -> ExecutionMessage:
        """`POST .../run`: execute now, outside the schedule, with a fresh tag."""
        return cls(
            job_key, now.astimezone(UTC), uuid.uuid4().hex, 0, manual=True, incarnation=incarnation
        )

    @property
    def start_at(self) -> datetime | None:
        """The instant this attempt must start at, or None for "as soon as it is delivered".

        A scheduled occurrence's first attempt starts at its second: the queue delivers it a
        little early (`execution_queue.EARLY_DELIVERY`) and the executor waits out the rest,
        because a Storage queue's visibility delay has whole-second granularity and a queue
        trigger polls at intervals. Retries and the errorAction follow a failure by at least
        `retryInterval` anyway, and a manual run is due when it is sent.
        """
        if self.manual or self.buffered or self.watchdog or self.action != MAIN_ACTION:
            return None
        if self.attempt:
            return None
        return self.occurrence + timedelta(seconds=self.jitter_seconds)

    def late_run(self, kind: str) -> ExecutionMessage:
        """This scheduled occurrence run late on purpose (`CATCH_UP`, `BACKFILL`): as a
        manual run (never judged late, never changing the job's state), with its own tag."""
        return replace(self, occurrence_number=0, manual=True, catch_up=kind)

    def belongs_to(self, incarnation: str) -> bool:
        """Whether this message was sent for that incarnation of its job (a message from an
        older sender, without one, belongs to any)."""
        return not self.incarnation or self.incarnation == incarnation

    def watching(self, *, lease_seen: str = "", before_claim: bool = False) -> ExecutionMessage:
        """The watchdog of this attempt (`lease_seen`: the expired lease it saw last time;
        `before_claim`: sent before the attempt was claimed)."""
        return replace(self, watchdog=True, lease_seen=lease_seen, before_claim=before_claim)

    def watched(self) -> ExecutionMessage:
        """The attempt this watchdog watches."""
        return replace(self, watchdog=False, lease_seen="", before_claim=False)

    def next_attempt(self) -> ExecutionMessage:
        return replace(self, attempt=self.attempt + 1)

    def error_action(self) -> ExecutionMessage:
        return replace(self, action=ERROR_ACTION, attempt=0)

    def to_json(self) -> str:
        """The message's JSON: its fields in order, `occurrence` in ISO form, the optional
        ones (`OMITTED_WHEN_UNSET`) only when set, and the version. Built field by field, not
        with `dataclasses.asdict`, whose deep copy of each value was most of the calls a
        watchdog's or a dispatched occurrence's send made in our own code (bench/own_cpu.py)."""
        body: JSONObject = {}
        for name in _FIELD_NAMES:
            value = getattr(self, name)
            if name in OMITTED_WHEN_UNSET and not value:
                continue
            body[name] = value.isoformat() if name == "occurrence" else value
        body["v"] = VERSION
        return json.dumps(body, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> ExecutionMessage:
        """Parse a message; anything malformed is a ValidationError (the caller poisons it)."""
        try:
            body = json.loads(text)
            if body.pop("v", None) != VERSION:
                raise ValueError("unknown message version")
            body["occurrence"] = datetime.fromisoformat(body["occurrence"]).astimezone(UTC)
            message = cls(**body)
        except (ValueError, TypeError, KeyError) as exc:
            raise ValidationError("message", f"not an execution message: {exc}") from exc
        if message.action not in (MAIN_ACTION, ERROR_ACTION):
            raise ValidationError("message.action", f"unknown action {message.action!r}")
        return message


#: The fields in the order `to_json` writes them.
_FIELD_NAMES = tuple(field.name for field in fields(ExecutionMessage))
#: Fields written only when set: the form every message had before each was added.
OMITTED_WHEN_UNSET = frozenset(
    {"jitter_seconds", "buffered", "catch_up", "watchdog", "lease_seen", "before_claim"}
)


#: Occurrences one batch message carries at most. A member is ~250-400 bytes of JSON, so 64
#: stay far below a Storage queue message's 64 KiB (48 KiB once base64-encoded).
BATCH_LIMIT = 64


def batch_json(messages: Sequence[ExecutionMessage]) -> str:
    """One queue message's body carrying `messages` (1 to `BATCH_LIMIT`), each as
    `ExecutionMessage.to_json` writes it."""
    if not 1 <= len(messages) <= BATCH_LIMIT:
        raise ValueError(f"a batch carries 1 to {BATCH_LIMIT} messages, not {len(messages)}")
    members = ",".join(message.to_json() for message in messages)
    return f'{{"v":{VERSION},"batch":[{members}]}}'


def parse_body(text: str) -> list[ExecutionMessage]:
    """The attempts a queue message's body carries: one for a lone message
    (`ExecutionMessage.from_json`), its members in order for a batch. Anything malformed is
    a ValidationError (the caller poisons it)."""
    try:
        body = json.loads(text)
    except ValueError as exc:
        raise ValidationError("message", f"not an execution message: {exc}") from exc
    if not isinstance(body, dict) or "batch" not in body:
        return [ExecutionMessage.from_json(text)]
    members = body.get("batch")
    if body.get("v") != VERSION or not isinstance(members, list) or not members:
        raise ValidationError("message.batch", "not a batch of execution messages")
    if len(members) > BATCH_LIMIT:
        raise ValidationError("message.batch", f"more than {BATCH_LIMIT} messages")
    return [ExecutionMessage.from_json(json.dumps(member)) for member in members]


def member_id(message_id: str, index: int, size: int) -> str:
    """The id a batch's member claims its attempt under: the queue message's own id for a
    lone message (`size` 1), else that id and the member's place in the batch."""
    return message_id if size == 1 else f"{message_id}#{index}"
