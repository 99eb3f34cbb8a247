"""CPU seconds of a process tree from `/proc`, for the benchmarks that compare the host's and
Azurite's CPU (`cost.py`, `lateness.py`)."""

from __future__ import annotations

import os
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def tree_cpu(pid: int) -> float:
    """CPU seconds of `pid` and every live descendant, with their reaped children."""
    stats: dict[int, tuple[int, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            text = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2 :].split()
        cpu = sum(int(v) for v in fields[11:15]) / TICKS  # utime stime cutime cstime
        stats[int(entry)] = (int(fields[1]), cpu)
    total, wanted = 0.0, {pid}
    changed = True
    while changed:
        changed = False
        for child, (parent, _) in stats.items():
            if parent in wanted and child not in wanted:
                wanted.add(child)
                changed = True
    for p in wanted:
        total += stats.get(p, (0, 0.0))[1]
    return total
