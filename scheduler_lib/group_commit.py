"""Writes to one partition that wait at the same moment go out as one transaction.

When many occurrences are due at the same second, the executor's members claim their jobs at
once, and the dispatcher advances a chunk's jobs at once: dozens of writes to one
partition (a collection's jobs) within the same round trip. Table storage bills an
entity-group transaction (up to 100 operations on one partition) as one request, so
writes that would each wait their turn anyway can share one.

This is classic group commit, the write-side sibling of `shared_reads`: per key (a table's
partition), a write that finds nothing in flight is sent at once, alone, as before (a quiet
moment pays nothing, not even a transaction of one); writes that arrive while one is in
flight queue up, and when it ends the first of them sends all that queued meanwhile (each
row once: a second write of the same row waits for the next round, so writes of a row keep
their order; at most `MAX_OPERATIONS` and `MAX_WEIGHT`, the rest in the next round) as one
group. No write waits longer than it would have behind the one in flight. A round of one
is sent alone.

A write conditional on a version (`condition`: an ETag) that a write of the same row
sent through here has already replaced cannot succeed (versions never come back): rather
than costing a round of its own (a transaction fails at its first failing write, so each
such write would fail one round of up to 100), it is settled at once with the error its
request would get (`superseded`). Two writers that read a row at once and both write it
(a lease renewal and an outcome) make exactly such a pair.

What a caller sees is what its lone write would show: its own result, or its own error.
`send_group` says per write what happened: a result, an error for that caller alone, or
`AGAIN` (not applied: a transaction is all or nothing, so the others of a transaction one
write of which failed are sent again in the next round). An error `send_group` raises (no
answer: a connection reset, a timeout) reaches every caller of that group, as it would
each lone write. Nothing is kept once a key's writes end.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeAlias, TypeVar

W = TypeVar("W")
R = TypeVar("R")

#: Operations per round: an entity-group transaction's limit.
MAX_OPERATIONS = 100
#: Estimated bytes per round (`weight`), well under a transaction's 4 MiB.
MAX_WEIGHT = 2 * 1024 * 1024


class _Again:
    def __repr__(self) -> str:
        return "AGAIN"


#: `send_group`'s answer for a write that was not applied: it goes in the next round.
AGAIN = _Again()

#: What became of one write of a group: its result, its error, or `AGAIN`.
Outcome: TypeAlias = "R | BaseException | _Again"
SendOne: TypeAlias = Callable[[W], R]
SendGroup: TypeAlias = "Callable[[list[W]], list[Outcome[R]]]"


class _Write(Generic[W, R]):
    """One caller's write while it waits: its outcome once settled, or a round to send."""

    def __init__(
        self, row: Hashable, item: W, weight: int, condition: Hashable | None,
        superseded: Callable[[W], BaseException] | None,
    ) -> None:  # fmt: skip
        self.row, self.item, self.weight = row, item, weight
        self.condition, self.superseded = condition, superseded
        self.wake = threading.Event()
        self.round: list[_Write[W, R]] | None = None
        self.settled = False
        self.value: R | None = None
        self.error: BaseException | None = None


class GroupCommit(Generic[W, R]):
    """Group commit by key (see the module). Thread-safe; one per worker process."""

    def __init__(self, *, max_operations: int = MAX_OPERATIONS, max_weight: int = MAX_WEIGHT):
        self.max_operations, self.max_weight = max_operations, max_weight
        self._lock = threading.Lock()
        #: Keys with a write in flight, and the writes waiting behind it.
        self._waiting: dict[Hashable, list[_Write[W, R]]] = {}
        #: Per key in flight: (row, condition) pairs a write sent here has replaced.
        self._replaced: dict[Hashable, set[tuple[Hashable, Hashable]]] = {}
        #: Groups sent as one (what the tests check; never reset).
        self.groups = 0

    def write(
        self,
        key: Hashable,
        row: Hashable,
        item: W,
        *,
        send_one: SendOne[W, R],
        send_group: SendGroup[W, R],
        weight: int = 0,
        condition: Hashable | None = None,
        superseded: Callable[[W], BaseException] | None = None,
    ) -> R:
        """`send_one(item)`'s result, or its error: sent alone at once when nothing of `key`
        is in flight, else in the next group of `key` (the writes of one key pass functions
        that reach the same place; a round's sender uses its own). `condition`: the version
        of `row` the write requires, and `superseded(item)` the error it gets once a write
        sent here replaced that version (see the module)."""
        mine: _Write[W, R] = _Write(row, item, weight, condition, superseded)
        with self._lock:
            waiting = self._waiting.get(key)
            if waiting is None:
                self._waiting[key], self._replaced[key] = [], set()
            else:
                waiting.append(mine)
        if waiting is None:
            try:
                value = send_one(item)
                self._applied(key, mine)
                return value
            finally:
                self._hand_on(key)
        while not mine.settled:
            mine.wake.wait()
            mine.wake.clear()
            group, mine.round = mine.round, None
            if group is not None:  # this caller sends the round
                try:
                    self._send(key, group, send_one, send_group)
                finally:
                    self._hand_on(key)
        if mine.error is not None:
            raise mine.error
        return mine.value  # type: ignore[return-value]  # set when settled without an error

    def waiting(self, key: Hashable) -> int:
        """Writes of `key` waiting behind the one in flight (0 when none is)."""
        with self._lock:
            return len(self._waiting.get(key, ()))

    def _send(
        self, key: Hashable, group: list[_Write[W, R]], send_one: SendOne[W, R],
        send_group: SendGroup[W, R],
    ) -> None:  # fmt: skip
        outcomes: list[Outcome[R]]
        try:
            if len(group) == 1:
                outcomes = [send_one(group[0].item)]
            else:
                outcomes = list(send_group([w.item for w in group]))
                with self._lock:
                    self.groups += 1
        except BaseException as exc:  # no answer: every caller of the group sees it
            outcomes = [exc] * len(group)
        again = [w for w, outcome in zip(group, outcomes, strict=True) if outcome is AGAIN]
        with self._lock:
            self._waiting[key][:0] = again  # first in the next round, in their order
        for write, outcome in zip(group, outcomes, strict=True):
            if outcome is AGAIN:
                continue
            if isinstance(outcome, BaseException):
                write.error = outcome
            else:
                write.value = outcome  # type: ignore[assignment]  # an R: not AGAIN, no error
                self._applied(key, write)
            write.settled = True
            write.wake.set()

    def _applied(self, key: Hashable, write: _Write[W, R]) -> None:
        if write.condition is not None:
            with self._lock:
                self._replaced[key].add((write.row, write.condition))

    def _hand_on(self, key: Hashable) -> None:
        """The write in flight ended: the first waiting write sends the next round."""
        with self._lock:
            waiting = self._waiting[key]
            doomed = self._doomed(key, waiting)
            group = self._take(waiting) if waiting else None
            if group is None:
                del self._waiting[key], self._replaced[key]
        for write in doomed:  # settled without a request: none could succeed
            assert write.superseded is not None  # `_doomed` takes only those that have one
            write.error = write.superseded(write.item)
            write.settled = True
            write.wake.set()
        if group is not None:
            group[0].round = group
            group[0].wake.set()

    def _doomed(self, key: Hashable, waiting: list[_Write[W, R]]) -> list[_Write[W, R]]:
        """Take out of `waiting` the writes whose condition a write sent here replaced."""
        replaced = self._replaced[key]
        doomed: list[_Write[W, R]] = []
        kept: list[_Write[W, R]] = []
        for write in waiting:
            lost = write.superseded is not None and (write.row, write.condition) in replaced
            (doomed if lost else kept).append(write)
        waiting[:] = kept
        return doomed

    def _take(self, waiting: list[_Write[W, R]]) -> list[_Write[W, R]]:
        """The next round out of `waiting` (the rest stays): each row's first write, in
        order, within the bounds; a row passed over once is passed over for the round."""
        taken: list[_Write[W, R]] = []
        rest: list[_Write[W, R]] = []
        seen: set[Hashable] = set()
        weight = 0
        for write in waiting:
            full = len(taken) >= self.max_operations or (
                taken and weight + write.weight > self.max_weight
            )
            if write.row in seen or full:
                rest.append(write)
            else:
                taken.append(write)
                weight += write.weight
            seen.add(write.row)
        waiting[:] = rest
        return taken
