"""`SCHEDULER_PRECISION`: how exactly a scheduled occurrence starts, a per-deployment choice
between second-level precision and its billed hold (docs/cost.md). Its own module so that
`config.py` stays a reader of plain settings under the size cap; `read_choice` reads any
setting of a closed set of words (`watchdog_choice` too)."""

from __future__ import annotations

from collections.abc import Mapping
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
