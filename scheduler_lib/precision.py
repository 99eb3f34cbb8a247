"""`SCHEDULER_PRECISION`: how exactly a scheduled occurrence starts, a per-deployment choice
between second-level precision and its billed hold (docs/cost.md); and, with `minute`,
`SCHEDULER_COALESCE_SECONDS`: how late it may start so that the occurrences of a few seconds
share one queue message and one function execution. Its own module so that `config.py`
stays a reader of plain settings under the size cap; `read_choice` reads any setting of a
closed set of words (`watchdog_choice` too)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import TypeVar

from scheduler_lib.errors import ValidationError

E = TypeVar("E", bound=StrEnum)


class Precision(StrEnum):
    """SECOND delivers an occurrence 1-2 s early and waits for its second in the invocation
    (billed); MINUTE delivers it at its second and starts it when the queue trigger takes
    it (up to a few seconds late, never early, no hold)."""

    SECOND = "second"
    MINUTE = "minute"


def read_choice(env: Mapping[str, str], name: str, choices: type[E], default: E) -> E:
    """The app setting `name` as one of `choices` (any case, spaces around ignored; unset:
    `default`), or a ValidationError naming the setting and the words it takes."""
    text = env.get(name, default.value).strip().lower()
    if text not in set(choices):
        words = " or ".join(f"'{choice.value}'" for choice in choices)
        raise ValidationError(name, f"must be {words}")
    return choices(text)


def read_precision(env: Mapping[str, str]) -> Precision:
    """The setting's value (default `second`), or a ValidationError naming it."""
    return read_choice(env, "SCHEDULER_PRECISION", Precision, Precision.SECOND)


COALESCE_SETTING = "SCHEDULER_COALESCE_SECONDS"
#: The longest window: the dispatcher's look-ahead (a minute), so that an occurrence still
#: starts before the tick after the one that sent it.
MAX_COALESCE_SECONDS = 60


def read_coalesce(env: Mapping[str, str], precision: Precision, grace: timedelta) -> int:
    """`SCHEDULER_COALESCE_SECONDS` (unset or 0: off): with `minute` precision, a scheduled
    occurrence becomes visible at the end of the window of that many seconds it falls in
    (`window_end`), never earlier, so that the occurrences of one window go out as one queue
    message and run in one execution; each starts up to that many seconds late (docs/cost.md,
    "Coalesced occurrences"). Refused by name when it is not a whole number from 0 to
    `MAX_COALESCE_SECONDS`, with `second` precision (whose point is the exact second), or
    when it is not shorter than the grace period (its occurrences would be postponed as
    missed)."""
    raw = env.get(COALESCE_SETTING, "").strip() or "0"
    try:
        seconds = int(raw)
    except ValueError:
        seconds = -1
    if not 0 <= seconds <= MAX_COALESCE_SECONDS:
        raise ValidationError(COALESCE_SETTING, f"whole seconds from 0 to {MAX_COALESCE_SECONDS}")
    if seconds and precision is Precision.SECOND:
        raise ValidationError(
            COALESCE_SETTING, "needs SCHEDULER_PRECISION=minute (second starts each at its second)"
        )
    if seconds and timedelta(seconds=seconds) >= grace:
        raise ValidationError(COALESCE_SETTING, "must be shorter than SCHEDULER_GRACE_PERIOD")
    return seconds


def window_end(at: datetime, seconds: int) -> datetime:
    """The end of the `seconds`-long window that holds `at`; `at` itself when a window starts
    there. Windows are counted from the Unix epoch, so that every tick, chunk and instance
    puts an occurrence in the same one (60: whole minutes)."""
    ends = math.ceil(round(at.timestamp(), 6) / seconds) * seconds
    return datetime.fromtimestamp(ends, UTC)
