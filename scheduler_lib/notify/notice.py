"""A notice: one event of one job that its subscriptions may be told about, as it travels
on the notifications queue (`Notice.to_json`) from where it was seen (the executor's and the
dispatcher's events, the dead-man switch) to the notification worker.

Its `notice_id` is derived from what happened (the job, the event, the occurrence or the
instant that made it), never drawn at random: seen twice (a message delivered again, two
workers judging the same deadline), it is the same notice, with one record and the same
`webhook-id` on every delivery, so a receiver de-duplicates too.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import Any

from scheduler_lib.errors import ValidationError
from scheduler_lib.timeutil import iso_z
from scheduler_lib.wire.notifications import EVENTS


@dataclass(frozen=True)
class Notice:
    """One event of one job (see the module docstring)."""

    notice_id: str
    event: str  # a `NotificationEvent`
    job_key: str
    time: datetime  # when it happened (the record's order)
    detail: str  # one sentence for people
    #: Faulted occurrences in a row before this one (Failed: 0 starts a streak); -1 unknown.
    streak_before: int = -1
    #: Delivery rounds already made (the worker's own retry).
    round: int = 0

    def to_json(self) -> str:
        data = asdict(self)
        data["time"] = iso_z(self.time)
        return json.dumps(data, separators=(",", ":"))

    @classmethod
    def from_json(cls, body: str) -> Notice:
        try:
            data: dict[str, Any] = json.loads(body)
            notice = cls(**{**data, "time": datetime.fromisoformat(data["time"])})
        except (ValueError, TypeError, KeyError) as exc:
            raise ValidationError("notice", f"is not a notice: {exc}") from None
        if notice.event not in EVENTS or notice.time.utcoffset() is None:
            raise ValidationError("notice", "is not a notice")
        return notice

    def next_round(self) -> Notice:
        return replace(self, round=self.round + 1)


def make_notice(
    event: str, job_key: str, basis: str, time: datetime, detail: str, *, streak_before: int = -1
) -> Notice:
    """A notice whose id is a digest of (job, event, `basis`): see the module docstring."""
    digest = hashlib.sha256(f"{job_key}\n{event}\n{basis}".encode()).hexdigest()[:32]
    return Notice(f"ntf_{digest}", event, job_key, time, detail, streak_before)
