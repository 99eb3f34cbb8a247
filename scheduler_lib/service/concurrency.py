"""Optimistic concurrency for the use cases' read-modify-write operations.

Every write follows a read and is conditioned on the ETag that read returned. When the
client sent `If-Match`, it pinned that version, so losing a race is its 412. Without it, the
operation is simply run again from the read: concurrent PATCHes of different fields then all
land, none silently overwriting another.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from scheduler_lib.errors import (
    ConflictError,
    NotFoundError,
    PreconditionFailedError,
    QuotaExceededError,
)
from scheduler_lib.store import LostRace, retry_lost_races

T = TypeVar("T")


def retrying(attempt: Callable[[], T]) -> T:
    """Run a read-modify-write `attempt` again while it loses races (the store's one loop:
    bounded, backing off; a 409 asking to retry when the bound is reached)."""
    return retry_lost_races(attempt)


def current(read: Callable[[], T]) -> T | None:
    """What `read` finds, or None where it is not there (a PUT's read before it creates)."""
    try:
        return read()
    except NotFoundError:
        return None


@contextmanager
def conditional_write(client_etag: str | None, what: str) -> Iterator[None]:
    """A storage write conditioned on the ETag we read: losing the race is the client's 412
    when it sent If-Match (it pinned that version), otherwise a `LostRace` to retry."""
    try:
        yield
    except QuotaExceededError:
        raise  # decided on what the write found (a full collection), not a lost race
    except (PreconditionFailedError, ConflictError) as exc:
        if client_etag is not None:
            raise PreconditionFailedError(f"{what} was changed by another request.") from exc
        raise LostRace from exc


def check_if_match(expected: str | None, actual: str | None, what: str) -> None:
    """412 when the client's `If-Match` names another version than the stored one."""
    if expected is None or expected.strip() == "*":
        return
    candidates = [tag.strip() for tag in expected.split(",")]
    if actual is None or actual not in candidates:
        raise PreconditionFailedError(
            f"{what} has changed (If-Match does not match its current ETag)."
        )
