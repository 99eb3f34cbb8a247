"""What the soak (bench/soak.py) expected against what its HTTP target received, as a table.

Every expected occurrence (job, scheduled time) is matched with the requests that carried
its `x-ms-scheduler-expected-execution-time`:

- lost: none arrived before the observation window closed;
- doubled: more than one arrived, and the first was not in flight when the host was killed
  or storage went away;
- in-flight repeats: the documented at-least-once case, counted apart: the first copy
  arrived while its executor was killed (kill -9) or could not record it (storage down),
  and the occurrence ran again afterwards;
- late: the first copy arrived more than `LATE` after its scheduled second.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

#: Later than this after its second is late (deliveries are claimed 1-2 s early and start on
#: their second; a second of slack for a loaded machine).
LATE = timedelta(seconds=2)


@dataclass(frozen=True)
class Arrival:
    """One request the soak's target received: the job, the occurrence its execution tag
    names, and when it came."""

    job: str
    expected: datetime
    tag: str
    arrived: datetime


@dataclass
class Window:
    """A disruption: from `start` to `end` (the host killed, or storage stopped)."""

    name: str
    start: datetime
    end: datetime


@dataclass
class Tally:
    expected: int = 0
    once: int = 0
    lost: list[str] = field(default_factory=list)
    doubled: list[str] = field(default_factory=list)
    in_flight_repeats: int = 0
    late: int = 0
    worst_late: float = 0.0
    late_by_due: dict[datetime, list[float]] = field(default_factory=dict)
    unexpected: int = 0


def tally(
    expected: dict[str, list[datetime]],
    arrivals: list[Arrival],
    windows: list[Window],
    groups: dict[str, str],
    optional: dict[str, list[datetime]] | None = None,
) -> dict[str, Tally]:
    """Per group of jobs (`groups`: job -> group name), and "all". An `optional` occurrence
    is not owed (its job was deleted and created again around it): counted only if it
    arrived, so that a double of it shows, but its absence does not."""
    received: dict[tuple[str, datetime], list[Arrival]] = defaultdict(list)
    for arrival in arrivals:
        received[arrival.job, arrival.expected].append(arrival)
    tallies: dict[str, Tally] = defaultdict(Tally)
    owed = [(job, due, True) for job, times in expected.items() for due in times]
    maybe = [(job, due, False) for job, times in (optional or {}).items() for due in times]
    for job, due, required in owed + maybe:
        copies = sorted(received.pop((job, due), []), key=lambda a: a.arrived)
        if copies or required:
            for name in (groups[job], "all"):
                _count(tallies[name], job, due, copies, windows)
    for (job, _), copies in received.items():  # an occurrence nobody scheduled
        for name in (groups.get(job, "other"), "all"):
            tallies[name].unexpected += len(copies)
    return dict(tallies)


def _count(t: Tally, job: str, due: datetime, copies: list[Arrival], windows: list[Window]) -> None:
    t.expected += 1
    label = f"{job}@{due:%H:%M:%S}"
    if not copies:
        t.lost.append(label + _during(due, windows))
        return
    lateness = (copies[0].arrived - due).total_seconds()
    if copies[0].arrived - due > LATE:
        t.late += 1
        t.worst_late = max(t.worst_late, lateness)
        t.late_by_due.setdefault(due, []).append(lateness)
    if len(copies) == 1:
        t.once += 1
    elif any(w.start - LATE <= copies[0].arrived <= w.end for w in windows):
        t.in_flight_repeats += 1
    else:
        gap = (copies[1].arrived - copies[0].arrived).total_seconds()
        tags = "same tag" if copies[0].tag == copies[1].tag else "other tag"
        t.doubled.append(f"{label} x{len(copies)} ({tags}, {gap:.1f}s apart)")


def _during(due: datetime, windows: list[Window]) -> str:
    for w in windows:
        if w.start - LATE <= due <= w.end + LATE:
            return f" (due during {w.name})"
    return ""


def table(tallies: dict[str, Tally], windows: list[Window]) -> str:
    head = ("jobs", "expected", "once", "lost", "doubled", "in-flight repeat", "late >2s",
            "worst late s", "unexpected")  # fmt: skip
    rows = [head]
    for name in sorted(tallies, key=lambda n: (n == "all", n)):
        t = tallies[name]
        rows.append((name, str(t.expected), str(t.once), str(len(t.lost)), str(len(t.doubled)),
                     str(t.in_flight_repeats), str(t.late), f"{t.worst_late:.1f}",
                     str(t.unexpected)))  # fmt: skip
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = [" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    details = []
    for label, items in (("lost", tallies["all"].lost), ("doubled", tallies["all"].doubled)):
        if items:
            more = f", ... (+{len(items) - 12})" if len(items) > 12 else ""
            shown = ", ".join(items[:12]) + more
            details.append(f"{label}: {shown}")
    late = tallies["all"].late_by_due
    if late:
        details.append(
            "late, by scheduled time: "
            + ", ".join(
                f"{due:%H:%M:%S} {len(v)} (max {max(v):.1f}s){_during(due, windows)}"
                for due, v in sorted(late.items())
            )
        )
    return "\n".join(lines + details)
