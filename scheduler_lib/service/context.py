"""What every use case needs: its context, built once per app (settings, storage clients,
the clock), and the rules of its read-modify-writes (optimistic concurrency). The API's
routes and the dashboard's pages hand the context to `service` functions with the request's
api-version (`version`).

The clients are handed in by whoever hosts the app (`Runtime` shares its own), or built
here; their tables and queues are created on first use rather than when the app is built,
so building the app (at Functions worker import) never touches the network. When storage
cannot be reached, a use case raises the Azure SDK's error; `storage_unavailable` says
whether that is an outage (a 503 with Retry-After) or a bug, for every front end alike.

Every write follows a read and is conditioned on the ETag that read returned. When the
client sent `If-Match`, it pinned that version, so losing a race is its 412. Without it, the
operation is simply run again from the read (the store's one loop, `retry_lost_races`):
concurrent PATCHes of different fields then all land, none silently overwriting another.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol, TypeVar

from scheduler_lib.config import Settings
from scheduler_lib.errors import (
    ConflictError,
    NotFoundError,
    PreconditionFailedError,
    QuotaExceededError,
)
from scheduler_lib.execution import ExecutionQueue
from scheduler_lib.store import LostRace, TableStore, storage_unavailable
from scheduler_lib.timeutil import Clock
from scheduler_lib.wire.versions import DEFAULT_VERSION, ApiVersion

__all__ = [
    "ApiContext",
    "check_if_match",
    "conditional_write",
    "current",
    "lost_race",
    "read_for_write",
    "storage_unavailable",
]
T = TypeVar("T")


@dataclass
class ApiContext:
    settings: Settings
    clock: Clock
    table_store: TableStore
    execution_queue: ExecutionQueue
    #: The request's `api-version`: each request gets its own copy of the app's context
    #: with it (`dependencies`), so validation and responses follow the version asked for.
    version: ApiVersion = DEFAULT_VERSION

    @property
    def store(self) -> TableStore:
        """The table store, its tables created on first use."""
        return self.table_store.ready()

    @property
    def queue(self) -> ExecutionQueue:
        """The execution queue, created on first use."""
        return self.execution_queue.ready()


class Versioned(Protocol):
    """A stored resource as a write reads it: its name and the ETag to condition on."""

    @property
    def name(self) -> str: ...

    @property
    def etag(self) -> str | None: ...


V = TypeVar("V", bound=Versioned)


def current(read: Callable[[], T]) -> T | None:
    """What `read` finds, or None where it is not there (a PUT's read before it creates)."""
    try:
        return read()
    except NotFoundError:
        return None


def read_for_write(
    read: Callable[[], V], client_etag: str | None, kind: str, name: str
) -> V | None:
    """A PUT's read, with the client's `If-Match` checked against what it found: the
    resource (None when there is none yet), or a 412 when `If-Match` names another version
    or names one of a resource that does not exist (`kind` and `name` word the error)."""
    found = current(read)
    if found is None:
        if client_etag is not None:
            raise PreconditionFailedError(f"{kind} '{name}' does not exist (If-Match was given).")
        return None
    check_if_match(client_etag, found.etag, f"{kind} '{found.name}'")
    return found


def lost_race(client_etag: str | None, what: str) -> Exception:
    """What a storage write conditioned on the ETag we read raises when it loses the race:
    the client's 412 when it sent If-Match (it pinned that version), otherwise a `LostRace`
    to retry (a full collection's `QuotaExceededError` is raised as it is, before this)."""
    if client_etag is not None:
        return PreconditionFailedError(f"{what} was changed by another request.")
    return LostRace()


@contextmanager
def conditional_write(client_etag: str | None, what: str) -> Iterator[None]:
    """A storage write conditioned on the ETag we read (see `lost_race`)."""
    try:
        yield
    except QuotaExceededError:
        raise  # decided on what the write found (a full collection), not a lost race
    except (PreconditionFailedError, ConflictError) as exc:
        raise lost_race(client_etag, what) from exc


def check_if_match(expected: str | None, actual: str | None, what: str) -> None:
    """412 when the client's `If-Match` names another version than the stored one."""
    if expected is None or expected.strip() == "*":
        return
    candidates = [tag.strip() for tag in expected.split(",")]
    if actual is None or actual not in candidates:
        raise PreconditionFailedError(
            f"{what} has changed (If-Match does not match its current ETag)."
        )
