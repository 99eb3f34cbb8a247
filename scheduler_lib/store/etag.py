"""The one read-modify-write loop behind every ETag-conditional write.

Every writer of a shared entity (the API, the dispatcher, the executor, the partition
counters) reads it, computes the change, and writes conditioned on the ETag it read. Losing
that race is normal: the loser raises `LostRace` and runs again from the read. This module is
the loop: one bound (`ATTEMPTS`), one back-off (a short random pause that grows with the
attempt, so writers contending for one entity spread out instead of colliding again), and one
error when the bound is reached (`ContentionError`, a 409 on the API, a redelivery for the
executor, a job the next tick takes up again for the dispatcher).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from scheduler_lib.errors import ConflictError

#: Races one writer may lose before it gives up. Each round of a race one writer wins, so this
#: also bounds how many writers one entity absorbs at once (50 parallel PUTs into one
#: collection all update its job counter).
ATTEMPTS = 200
T = TypeVar("T")


class LostRace(Exception):
    """Another writer changed the entity between our read and our conditional write."""


class ContentionError(ConflictError):
    """The entity kept changing under us for `ATTEMPTS` rounds: try again later."""


def back_off(attempt: int) -> None:
    """A short random pause before attempt `attempt + 1` (at most 50 ms)."""
    time.sleep(random.uniform(0, min(0.05, 0.002 * 2 ** min(attempt, 5))))


def retry_lost_races(attempt: Callable[[], T], *, what: str = "The resource") -> T:
    """Run the read-modify-write `attempt` until it does not raise `LostRace`, backing off
    between rounds; `ContentionError` naming `what` after `ATTEMPTS` lost rounds."""
    for number in range(ATTEMPTS):
        try:
            return attempt()
        except LostRace:
            back_off(number)
    raise ContentionError(f"{what} is being changed by other requests; retry.")
