"""Storage requests a test made, read from the cost benchmark's counts (`storage_calls`),
by method: what the tests that bound a path's requests compare."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from scheduler_lib import storage_calls


def methods_since(since: Mapping[str, int], marker: str) -> Counter[str]:
    """Requests counted since `since` (a `storage_calls.snapshot()`) whose stage holds
    `marker` (`"[queue "`, `"store.jobs [table "`), by method (`POST`, `batch POST`)."""
    grown = Counter(storage_calls.snapshot())
    grown.subtract(since)
    methods: Counter[str] = Counter()
    for stage, count in grown.items():
        if marker in stage and count:
            methods[stage.rsplit("[", 1)[1].rstrip("]").split(" ", 1)[1]] += count
    return methods
