"""Overlapping reads of one key share one request (`shared_reads`): real threads,
each joined before anything is asserted; no storage (the collection read that uses it is
covered with Azurite in tests/execution/test_claims.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from scheduler_lib.shared_reads import SharedReads

WAITERS = 5


def _until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Wait for a state the threads reach (not for a schedule): fail after `timeout`."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the threads never got there"
        time.sleep(0.001)


class _Gated:
    """A load that blocks until released and counts its calls."""

    def __init__(self, value: object = "collection", error: Exception | None = None) -> None:
        self.release = threading.Event()
        self.calls = 0
        self.value, self.error = value, error
        self._lock = threading.Lock()

    def __call__(self) -> object:
        with self._lock:
            self.calls += 1
        self.release.wait(10)
        if self.error is not None:
            raise self.error
        return self.value


def _start(target: Callable[[], None], n: int) -> list[threading.Thread]:
    threads = [threading.Thread(target=target, name=f"reader{i}") for i in range(n)]
    for thread in threads:
        thread.start()
    return threads


def test_reads_that_overlap_share_the_one_under_way() -> None:
    reads: SharedReads[str, object] = SharedReads()
    load, answers = _Gated(), []
    leader = _start(lambda: answers.append(reads.read("c1", load)), 1)
    _until(lambda: load.calls == 1)
    waiters = _start(lambda: answers.append(reads.read("c1", load)), WAITERS)
    _until(lambda: reads.waiting("c1") == WAITERS)
    load.release.set()
    for thread in leader + waiters:
        thread.join(10)
    assert load.calls == 1 and answers == ["collection"] * (WAITERS + 1)
    assert reads.shared == WAITERS


def test_nothing_is_kept_once_a_read_ends_and_other_keys_read_for_themselves() -> None:
    reads: SharedReads[str, int] = SharedReads()
    calls: list[str] = []

    def load(key: str) -> Callable[[], int]:
        return lambda: calls.append(key) or len(calls)

    assert reads.read("c1", load("c1")) == 1
    assert reads.read("c1", load("c1")) == 2  # a later read sends its own request
    assert reads.read("c2", load("c2")) == 3
    assert calls == ["c1", "c1", "c2"] and reads.shared == 0


def test_a_failed_read_is_not_shared_each_waiter_reads_for_itself() -> None:
    reads: SharedReads[str, object] = SharedReads()
    failing, errors = _Gated(error=ConnectionError("storage down")), []

    def lead() -> None:
        try:
            reads.read("c1", failing)
        except ConnectionError as exc:
            errors.append(exc)

    own: list[str] = []
    leader = _start(lead, 1)
    _until(lambda: failing.calls == 1)
    waiters = _start(lambda: own.append(reads.read("c1", lambda: "own read")), WAITERS)
    _until(lambda: reads.waiting("c1") == WAITERS)
    failing.release.set()
    for thread in leader + waiters:
        thread.join(10)
    assert [str(e) for e in errors] == ["storage down"]
    assert own == ["own read"] * WAITERS and reads.shared == 0


def test_the_error_of_a_read_reaches_its_own_caller() -> None:
    reads: SharedReads[str, object] = SharedReads()

    def missing() -> object:
        raise KeyError("c1")

    with pytest.raises(KeyError):
        reads.read("c1", missing)
    assert reads.waiting("c1") == 0
