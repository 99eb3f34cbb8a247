"""A CPU profile of every thread of the local host, for the cost benchmark.

`cProfile` profiles only the thread that enables it, and the host's work runs on many
(executor, dispatch workers, the API's pool). With `SCHEDULER_BENCH_PROFILE` naming a file,
`devhost.main` calls `install`: every thread started afterwards runs under its own profiler
timed by `time.thread_time` (CPU time, so a thread blocked on a socket or a lock costs
nothing), and `dump` merges them into one pstats file when the host stops. cProfile's own
overhead inflates small, frequently called functions: read it for where the CPU goes, not
for absolute milliseconds (`bench/cost.py` measures those without it).
"""

from __future__ import annotations

import cProfile
import pstats
import threading
import time
from typing import Any

_profiles: list[cProfile.Profile] = []
_lock = threading.Lock()


def install() -> None:
    """Profile every thread started from now on (and the calling one)."""
    original = threading.Thread.run

    def run(self: threading.Thread, *args: Any, **kwargs: Any) -> None:
        profile = _start()
        try:
            original(self, *args, **kwargs)
        finally:
            profile.disable()

    threading.Thread.run = run  # type: ignore[method-assign]  # the profiler wraps every thread
    _start()


def _start() -> cProfile.Profile:
    profile = cProfile.Profile(time.thread_time)
    with _lock:
        _profiles.append(profile)
    profile.enable()
    return profile


def dump(path: str) -> None:
    """Merge every thread's profile so far into the pstats file `path`."""
    with _lock:
        profiles = list(_profiles)
    stats: pstats.Stats | None = None
    for profile in profiles:
        profile.create_stats()
        if stats is None:
            stats = pstats.Stats(profile)
        else:
            stats.add(profile)
    if stats is not None:
        stats.dump_stats(path)
