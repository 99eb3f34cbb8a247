"""Something done every few seconds while an attempt (or a batch of them) runs, on a thread
of its own that starts only at the first beat.

An attempt's heartbeat (`execution.heartbeat`) and a batch's watchdog
(`execution.batch_watchdog`) both beat every `lease.HEARTBEAT` (3 s) until what they
watch ends, and most of what they watch ends before the first beat: an HTTP call of tens of
milliseconds after a wait of at most 2 s for its second. Starting and joining a thread only
to wait out those 3 s and be stopped cost ~0.3 ms of CPU, more than a storage request's
signing and parsing. So `Beats.start` asks `later_calls` for the first beat, and the thread
starts then, only if it was not stopped meanwhile; from there it beats every `interval`.
"""

from __future__ import annotations

import threading

from scheduler_lib.later_calls import LATER, LaterCalls


class Beats:
    """`_beat()` every `interval` real seconds from `start` until `stop_beats`, or until a
    beat answers False; subclasses say what a beat does. `stop_beats` waits for a beat in
    progress, so that nothing a beat writes races what the caller does next."""

    def __init__(self, interval: float, *, name: str, later: LaterCalls = LATER) -> None:
        self.interval = interval
        self._stop, self._lock, self._later = threading.Event(), threading.Lock(), later
        self._thread = threading.Thread(target=self._run, args=(0.0,), name=name, daemon=True)

    def _beat(self) -> bool:
        """One beat; False: no more beats."""
        raise NotImplementedError

    def start(self) -> None:
        """Beat every `interval` from now; the thread starts at the first beat (see the
        module), so what ends before it starts none."""
        self._later.after(self.interval, self._launch)

    def _launch(self) -> None:
        with self._lock:  # never once stopped: `stop_beats` waits for a launch under way
            if not self._stop.is_set():
                self._thread.start()

    def stop_beats(self) -> None:
        """No beat from now on, one in progress ended first."""
        self._stop.set()
        with self._lock:
            started = self._thread.ident is not None
        if started:
            self._thread.join()

    def _run(self, first: float | None = None) -> None:
        """Beat every `interval` until stopped, the first after `first` (0 when launched at
        its time, `_launch`)."""
        wait = self.interval if first is None else first
        while not self._stop.wait(wait) and self._beat():
            wait = self.interval
