"""`SCHEDULER_PRECISION`: how exactly a scheduled occurrence starts, a per-deployment choice
between second-level precision and its billed hold (docs/cost.md). Its own module so that
`config.py` stays a reader of plain settings under the size cap."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from scheduler_lib.errors import ValidationError


class Precision(StrEnum):
    """SECOND delivers an occurrence 1-2 s early and waits for its second in the invocation
    (billed); MINUTE delivers it at its second and starts it when the queue trigger takes
    it (up to a few seconds late, never early, no hold)."""

    SECOND = "second"
    MINUTE = "minute"


def read_precision(env: Mapping[str, str]) -> Precision:
    """The setting's value (default `second`), or a ValidationError naming it."""
    text = env.get("SCHEDULER_PRECISION", "second").strip().lower()
    if text not in set(Precision):
        raise ValidationError("SCHEDULER_PRECISION", "must be 'second' or 'minute'")
    return Precision(text)
