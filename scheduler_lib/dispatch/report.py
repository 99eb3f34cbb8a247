"""What a tick, or one pair (a minute, one or more shards) of it, read and did (`TickReport`)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import UTC, datetime, timedelta

from scheduler_lib.store import MINUTE_FORMAT, TickSummary, minute_key
from scheduler_lib.timeutil import iso_z


@dataclass(frozen=True)
class TickReport:
    """What one tick read and did. `entities_read` is the tick's storage cost."""

    now: datetime
    first_minute: str
    through_minute: str
    minutes_read: int
    rows_read: int
    job_entities_read: int
    collection_entities_read: int
    history_entities_read: int
    messages_sent: int  # occurrences sent
    queue_sends: int  # the queue messages they took (a batch of them is one)
    parked_sent: int
    postponed: int
    stale_dropped: int
    completed: int
    failed: int
    cursor: datetime
    duration: float  # seconds

    @property
    def entities_read(self) -> int:
        return (
            self.rows_read
            + self.job_entities_read
            + self.collection_entities_read
            + self.history_entities_read
        )

    def summary(self) -> TickSummary:
        """What is stored as the last tick for the health endpoint (and a shard's last pair)."""
        counts = {f.name: getattr(self, f.name) for f in fields(self) if f.type == "int"}
        counts["entities_read"] = self.entities_read
        times = {
            "now": iso_z(self.now),
            "cursor": iso_z(self.cursor),
            "first_minute": self.first_minute,
            "through_minute": self.through_minute,
        }
        return TickSummary(counts, self.duration, times)


#: The fields a combined report adds up over its pairs.
SUMMED = tuple(
    f.name for f in fields(TickReport) if f.type == "int" and f.name not in ("minutes_read",)
)


def combine(
    now: datetime, parts: list[TickReport], cursor: datetime, duration: float
) -> TickReport:
    """One report for a tick handled as pairs (`parts`; none: every pair was done already)."""
    first = min((p.first_minute for p in parts), default=minute_key(now))
    through = max((p.through_minute for p in parts), default=minute_key(now))
    totals = {name: sum(getattr(p, name) for p in parts) for name in SUMMED}
    return TickReport(
        now=now,
        first_minute=first,
        through_minute=through,
        minutes_read=minutes_between(first, through),
        cursor=cursor,
        duration=duration,
        **totals,
    )


def minute_start(minute: str) -> datetime:
    return datetime.strptime(minute, MINUTE_FORMAT).replace(tzinfo=UTC)


def minutes_between(first: str, last: str) -> int:
    """How many minute partitions the range from `first` through `last` spans."""
    return int((minute_start(last) - minute_start(first)) / timedelta(minutes=1)) + 1
