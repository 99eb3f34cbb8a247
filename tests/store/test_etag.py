"""The one read-modify-write loop: a lost race runs the attempt again from its read, and the
loop is bounded (the dispatcher's and the resume loop were not), ending in a 409-class
`ContentionError`, never the 412 a client's own If-Match earns."""

from __future__ import annotations

import pytest

from scheduler_lib.errors import ConflictError, PreconditionFailedError
from scheduler_lib.store import etag
from scheduler_lib.store.etag import ContentionError, LostRace, retry_lost_races


def test_a_lost_race_runs_the_attempt_again() -> None:
    calls: list[int] = []

    def attempt() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise LostRace
        return "written"

    assert retry_lost_races(attempt) == "written"
    assert len(calls) == 3


@pytest.mark.slow  # ATTEMPTS real back-offs, ~5 s
def test_the_loop_is_bounded_and_ends_in_a_conflict_naming_what() -> None:
    calls: list[int] = []

    def attempt() -> None:
        calls.append(1)
        raise LostRace

    with pytest.raises(ContentionError, match="Job 'j1' is being changed") as raised:
        retry_lost_races(attempt, what="Job 'j1'")
    assert len(calls) == etag.ATTEMPTS
    assert isinstance(raised.value, ConflictError)
    assert not isinstance(raised.value, PreconditionFailedError)


def test_other_errors_are_not_retried() -> None:
    calls: list[int] = []

    def attempt() -> None:
        calls.append(1)
        raise PreconditionFailedError("pinned by If-Match")

    with pytest.raises(PreconditionFailedError):
        retry_lost_races(attempt)
    assert len(calls) == 1
