"""Each named value of a source evaluated once, and a value that needs itself refused.

ARM parameters and variables, Bicep params, vars and resources, Terraform locals: each is
computed the first time an expression asks for it and kept, and one whose computation asks
for itself (`a = b`, `b = a`) is a `SourceError` naming it, never a recursion error. One
mechanism for the three readers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from scheduler_lib.migrate.problems import SourceError

T = TypeVar("T")


class Memo(Generic[T]):
    """Values by key (a path in the source), computed once; `cycle` is the refusal's words."""

    def __init__(self, cycle: str = "refers to itself") -> None:
        self._values: dict[str, T] = {}
        self._busy: set[str] = set()
        self._cycle = cycle

    def get(self, key: str, compute: Callable[[], T]) -> T:
        if key not in self._values:
            if key in self._busy:
                raise SourceError(key, self._cycle)
            self._busy.add(key)
            try:
                self._values[key] = compute()
            finally:
                self._busy.discard(key)
        return self._values[key]
