"""A socket to an address the egress policy checked, living within an attempt's `Deadline`.

The one implementation of both for every outgoing HTTP connection of the actions: the HTTP
action's own exchange (`exchange`, on `http.client`) and the `requests` adapter (`pinned`:
the OAuth token request, the Storage-queue action through azure-core) connect with `connect`
and read answers through `read_within`.

- `connect` resolves the host once through `EgressPolicy.resolve`, which checks every
  address, and connects to a checked address (in the resolver's order, as
  `socket.create_connection` would). The caller keeps the name for TLS (SNI, the
  certificate check) and the Host header. So a DNS answer that changes between the check
  and the connect (DNS rebinding) cannot slip an internal address in.
- With a `Deadline`, every connect, the TLS handshake that follows, each send and each read
  is given only the time left (the socket timeout is set to it before each), and none
  starts once it is gone: a per-operation timeout never trips on a target that sends a byte
  every few seconds. No thread watches the socket, so nothing can close a descriptor that
  was meanwhile reused.
"""

from __future__ import annotations

import io
import socket
import time
from collections.abc import Callable
from typing import Any

from urllib3.util import connection

from scheduler_lib.actions.egress import EgressPolicy


class Deadline:
    """When an attempt must be over, `seconds` after it was made. A monotonic clock (a
    parameter, as the OAuth token cache's): only the duration matters, not an instant of
    the schedule."""

    def __init__(self, seconds: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._end = clock() + seconds

    def remaining(self) -> float:
        """The seconds left; TimeoutError (what a socket raises) when none are."""
        left = self._end - self._clock()
        if left <= 0:
            raise TimeoutError(f"the attempt's deadline of {self.seconds:g} s has passed")
        return left

    @property
    def expired(self) -> bool:
        """Whether it has passed (a socket timed out at it: allow for rounding)."""
        return self._end - self._clock() <= 0.01


def limit_to(sock: socket.socket | None, deadline: Deadline | None) -> None:
    """Give `sock`'s next operation (a send, a read, the TLS handshake) only the time
    `deadline` leaves: TimeoutError when none is; nothing without a socket or a deadline.
    The one place every step of an attempt is held to its deadline."""
    if sock is not None and deadline is not None:
        sock.settimeout(deadline.remaining())


def time_left(timeout: Any, deadline: Deadline | None) -> Any:
    """`timeout` (a number, None or urllib3's default), shortened to the deadline."""
    if deadline is None:
        return timeout
    left = deadline.remaining()
    return min(timeout, left) if isinstance(timeout, int | float) else left


def connect(
    policy: EgressPolicy,
    host: str,
    port: int,
    *,
    timeout: Any,
    deadline: Deadline | None,
    source_address: tuple[str, int] | None = None,
    socket_options: list[tuple[int, int, int | bytes]] | None = None,
) -> socket.socket:
    """A socket connected to one of the addresses `policy` resolved `host` to and checked.
    Raises EgressDenied (an address is refused), socket.gaierror (no such name), or the
    last address's OSError (TimeoutError when it, or the deadline, ran out)."""
    addresses = policy.resolve(host, port)
    failure: OSError | None = None
    for address in addresses:
        try:
            sock = connection.create_connection(
                (address, port),
                time_left(timeout, deadline),
                source_address=source_address,
                socket_options=socket_options,
            )
        except OSError as exc:  # TimeoutError included
            failure = exc
            continue
        try:
            limit_to(sock, deadline)  # the TLS handshake, if any, comes next
        except TimeoutError:
            sock.close()
            raise
        return sock
    assert failure is not None  # resolve returns at least one address
    raise failure


def read_within(response: Any, sock: socket.socket, deadline: Deadline | None) -> None:
    """Make `response` (an `http.client.HTTPResponse` just made, its head not yet read)
    read its socket through `DeadlineReader`, when there is a deadline."""
    if deadline is not None:
        # Keep the socket's own reader: it holds the socket open until we are done.
        response._socket_reader = response.fp
        response.fp = io.BufferedReader(DeadlineReader(response.fp.raw, sock, deadline))


class DeadlineReader(io.RawIOBase):
    """A response's socket reader that gives each read only the time left."""

    def __init__(self, raw: Any, sock: socket.socket, deadline: Deadline) -> None:
        super().__init__()
        self._raw, self._sock, self._deadline = raw, sock, deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        limit_to(self._sock, self._deadline)
        result: int | None = self._raw.readinto(buffer)
        return result

    def fileno(self) -> int:
        return int(self._raw.fileno())

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()
