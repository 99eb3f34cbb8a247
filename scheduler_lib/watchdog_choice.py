"""`SCHEDULER_WATCHDOG`: when an attempt sends its watchdog message (`execution/lease.py`), a
per-deployment choice between a takeover within seconds for every attempt and two queue
operations fewer for the attempts that end before their heartbeat's first beat
(docs/cost.md, "Watchdog choice"). Its own module, as `precision` is, so that `config.py`
stays a reader of plain settings under the size cap."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from scheduler_lib.precision import read_choice


class WatchdogChoice(StrEnum):
    """CLAIM sends the watchdog with the claim (every attempt: a send and a delete);
    HEARTBEAT sends it with the heartbeat's first renewal, only for an attempt still running
    then (`lease.HEARTBEAT` after its claim). A worker that dies before that beat is left to
    the Functions host's redelivery of its message (docs/deploy.md)."""

    CLAIM = "claim"
    HEARTBEAT = "heartbeat"


def read_watchdog(env: Mapping[str, str]) -> WatchdogChoice:
    """The setting's value (default `claim`), or a ValidationError naming it."""
    return read_choice(env, "SCHEDULER_WATCHDOG", WatchdogChoice, WatchdogChoice.CLAIM)
