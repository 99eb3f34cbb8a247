"""The control message: one pair the coordinator found due, a tick's minute and the shards
one dispatch worker handles together (one, or several whose rows are few; see
`coordinator`).

Small on purpose (the shards, the tick's minute and instant): the dispatch worker reads
everything else from storage, so a duplicate, late or repeated message is harmless. The wire
form keeps `shard` (the first) beside `shards` (all, only when more than one), so a message
of one shard is what it was before pairs could hold several; a worker of that older release
given a message of several handles its first shard only, and the others are in the next
tick's window (their cursors stayed where they were), a minute late at worst while both
releases run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime

from scheduler_lib.errors import ValidationError
from scheduler_lib.timeutil import iso_z


@dataclass(frozen=True)
class ControlMessage:
    minute: str  # the tick's minute (`yyyyMMddHHmm`)
    shards: tuple[int, ...]  # at least one, each once, in the order their leases are taken
    now: datetime  # the tick's instant: a pair handled for it (or later) is done

    @property
    def shard(self) -> int:
        """The pair's first shard (what a message of one shard names)."""
        return self.shards[0]

    def to_json(self) -> str:
        body: dict[str, object] = {"minute": self.minute, "shard": self.shard}
        if len(self.shards) > 1:
            body["shards"] = list(self.shards)
        body["now"] = iso_z(self.now)
        return json.dumps(body)

    @classmethod
    def from_json(cls, body: str) -> ControlMessage:
        try:
            data = json.loads(body)
            now = datetime.fromisoformat(data["now"])
            named = data.get("shards", [data["shard"]])
            if not isinstance(named, list) or not named:
                raise TypeError("shards is not a list of shards")
            shards = tuple(dict.fromkeys(_shard(value) for value in named))
            return cls(str(data["minute"]), shards, now.astimezone(UTC))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValidationError(
                "controlMessage", f"not a dispatch control message: {exc}"
            ) from exc


def _shard(value: object) -> int:
    """A shard number as the message holds it: a non-negative integer (not a bool)."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{value!r} is not a shard")
    return value
