"""The control message: one (minute, shard) pair the coordinator found due.

Small on purpose (the shard, the tick's minute and instant): the dispatch worker reads
everything else from storage, so a duplicate, late or repeated message is harmless.
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
    shard: int
    now: datetime  # the tick's instant: a pair handled for it (or later) is done

    def to_json(self) -> str:
        return json.dumps({"minute": self.minute, "shard": self.shard, "now": iso_z(self.now)})

    @classmethod
    def from_json(cls, body: str) -> ControlMessage:
        try:
            data = json.loads(body)
            now = datetime.fromisoformat(data["now"])
            return cls(str(data["minute"]), int(data["shard"]), now.astimezone(UTC))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValidationError(
                "controlMessage", f"not a dispatch control message: {exc}"
            ) from exc
