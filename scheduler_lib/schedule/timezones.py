"""Evaluation zones: naming them (IANA or Windows) and moving between wall clock and instant.

Schedules are written in wall-clock terms ("09:00 in New York"), but executions are instants.
Both directions live here so that every module resolves a wall-clock reading the same way,
following the schedule semantics:

- a reading that does not exist (spring forward) moves forward by the gap: 02:30 -> 03:30;
- a reading that occurs twice (fall back) means the earlier instant.

Both rules are exactly PEP 495's `fold=0` interpretation, which `zoneinfo` implements, so a
reading is resolved by attaching the zone with `fold=0` and converting to UTC.

Windows zone names ("Eastern Standard Time", as Logic Apps accepts them) are mapped through
the CLDR windowsZones table as shipped by `tzlocal`, rather than a hand-kept copy.
"""

from __future__ import annotations

import zoneinfo
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from functools import cache
from typing import cast

from tzlocal.windows_tz import win_tz

#: Names of zones that are UTC at every instant: evaluated with the fast `timezone.utc`.
_UTC_ALIASES = frozenset(
    {
        "UTC", "Etc/UTC", "UCT", "Etc/UCT", "Universal", "Etc/Universal", "Zulu", "Etc/Zulu",
        "GMT", "Etc/GMT", "GMT0", "Etc/GMT0", "GMT+0", "Etc/GMT+0", "GMT-0", "Etc/GMT-0",
        "Greenwich", "Etc/Greenwich",
    }
)  # fmt: skip

#: Entries of the system zone directory that are not tz database zones: `localtime` is the
#: host's own setting (a deployment accident, not a schedule), `Factory` means "unset".
_NOT_ZONES = frozenset({"localtime", "posixrules", "Factory"})


@dataclass(frozen=True, slots=True)
class EvaluationZone:
    """The zone a schedule's wall-clock fields are read in.

    A *reading* is a wall-clock time carried as a datetime whose fields are the reading and
    whose tzinfo is UTC. The engine does its calendar arithmetic on readings because adding
    a timedelta to one is cheap while swapping a tzinfo is not; in UTC a reading already is
    its instant, elsewhere `resolve` subtracts the zone's offset for that reading.
    """

    name: str  # IANA key, e.g. "America/New_York"
    tzinfo: tzinfo
    is_utc: bool

    def reading(self, instant: datetime) -> datetime:
        """The wall-clock reading of an aware instant in this zone."""
        if self.is_utc:
            return instant.astimezone(UTC)
        return instant.astimezone(self.tzinfo).replace(tzinfo=UTC, fold=0)

    def resolve(self, reading: datetime) -> datetime:
        """The instant of a reading: PEP 495's fold=0, i.e. a reading in a gap moves forward
        by the gap and a repeated reading means the earlier instant. (`ZoneInfo.utcoffset`
        reads only the fields and fold of its argument, so a reading can be passed as is.)"""
        if self.is_utc:
            return reading
        return reading - self.offset(reading)

    def instant(self, wall: datetime) -> datetime:
        """The aware UTC instant of a naive wall-clock time (gap: forward; overlap: earlier)."""
        return self.resolve(wall.replace(tzinfo=UTC, fold=0))

    def earliest_instant_from(self, reading: datetime) -> datetime:
        """A lower bound of `resolve(r)` for every reading `r >= reading`.

        Readings resolve monotonically except inside a gap, where they jump forward; the
        smaller of the two PEP 495 interpretations of `reading` is below all of them.
        """
        if self.is_utc:
            return reading
        later = reading.replace(fold=1)
        return min(reading - self.offset(reading), later - self.offset(later))

    def offset(self, reading: datetime) -> timedelta:
        """The zone's UTC offset for `reading` (a tz database zone always has one)."""
        return cast(timedelta, self.tzinfo.utcoffset(reading))


UTC_ZONE = EvaluationZone("UTC", UTC, True)


def resolve_zone(name: str) -> EvaluationZone:
    """The zone called `name` (IANA or Windows name; exact spelling first, then any case).

    Raises `LookupError` when the zone database does not know the name.
    """
    key = _lookup(name)
    if key is None:
        raise LookupError(name)
    if key in _UTC_ALIASES:
        return EvaluationZone(key, UTC, True)
    return EvaluationZone(key, zoneinfo.ZoneInfo(key), False)


def _lookup(name: str) -> str | None:
    """The IANA key for `name`, or None."""
    known = _iana_keys()
    if name in known:
        return name
    if name in win_tz:
        return win_tz[name]
    return _casefolded().get(name.casefold())


@cache
def _iana_keys() -> frozenset[str]:
    """Every zone the zone database knows (read once: listing it scans the zone directory)."""
    return frozenset(zoneinfo.available_timezones() - _NOT_ZONES)


@cache
def _casefolded() -> dict[str, str]:
    """Case-insensitive index of IANA and Windows names, both pointing at the IANA key."""
    index = {windows.casefold(): iana for windows, iana in win_tz.items()}
    index.update({key.casefold(): key for key in _iana_keys()})
    return index
