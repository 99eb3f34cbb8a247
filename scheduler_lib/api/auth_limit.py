"""The API's bearer keys: whether a request carries one (`admits`, the middleware's one call
per request), and how many wrong keys one client address may send: `LIMIT` in a `WINDOW`,
then 429 with `Retry-After` until that window is over. The API's bearer keys and the
dashboard's sign-in form share one count, since both guess the same keys.

While an address is over its limit:

- If a valid key came from it in the last `PROVEN_FOR`, its valid keys still pass and only
  its wrong keys get 429: an API client keeps working while someone behind the same NAT or
  proxy guesses keys (or while the client address cannot be told, `front_end.UNKNOWN`).
- Otherwise it gets 429 whatever it sends, before the key is compared. Were a valid key to
  pass there too, the limit would not limit guessing at all: wrong keys 429, the right one
  200, at any rate. Someone who never had a key waits out the window.

The window starts at an address's first wrong key, and its limit is logged once, when it is
reached (the address and the count, never a key). A steady guesser gets `LIMIT` tries per
window and one log line.

The count is per instance and in memory: at most `MAX_ADDRESSES` addresses, the least
recently seen forgotten first. With n instances an address gets up to n x `LIMIT` tries a
window; a restart forgets. Shared state in storage would cost a write per wrong key, which
is what an attacker would then make us pay; App Service access restrictions and Front
Door's WAF limit rates in front of the app (docs/deploy.md).
"""

from __future__ import annotations

import hmac
import logging
import math
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar

from scheduler_lib.errors import TooManyRequestsError
from scheduler_lib.timeutil import Clock

log = logging.getLogger(__name__)
LIMIT = 10
WINDOW = timedelta(minutes=1)
PROVEN_FOR = timedelta(hours=1)
MAX_ADDRESSES = 10_000
T = TypeVar("T")


@dataclass
class _Address:
    window_end: datetime | None = None
    failures: int = 0
    valid_at: datetime | None = None  # the last valid key from here


def bearer_token(header: str | None) -> bytes | None:
    """The key of `Authorization: Bearer <key>`, or None when no key is presented (no
    header, another scheme, no token): a request without a key guesses none, so only
    requests with one count against the limit on wrong keys."""
    scheme, _, token = (header or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip().encode()


def authorized(header: str | None, keys: tuple[str, ...]) -> bool:
    """`Authorization: Bearer <key>` with one of `keys`. Every key is compared (in constant
    time each), so the answer's timing does not reveal which key came close."""
    presented = bearer_token(header)
    if presented is None or not keys:
        return False
    matched = False
    for key in keys:
        matched |= hmac.compare_digest(presented, key.encode())
    return matched


class AuthLimiter:
    """The wrong keys of each client address, on the app's clock."""

    def __init__(
        self,
        clock: Clock,
        *,
        limit: int = LIMIT,
        window: timedelta = WINDOW,
        proven_for: timedelta = PROVEN_FOR,
        capacity: int = MAX_ADDRESSES,
    ) -> None:
        self.clock = clock
        self.limit, self.window, self.proven_for, self.capacity = (
            limit, window, proven_for, capacity)  # fmt: skip
        self._addresses: OrderedDict[str, _Address] = OrderedDict()
        self._lock = threading.Lock()

    def admits(self, client: str, header: str | None, keys: tuple[str, ...]) -> bool:
        """Whether `header` (`Authorization`) carries one of `keys`, counted against
        `client`'s limit (a request without a key guesses none and is not counted);
        `TooManyRequestsError` while `client` is over it."""
        if bearer_token(header) is None:
            return False
        return bool(self.attempt(client, lambda: True if authorized(header, keys) else None))

    def attempt(self, client: str, check: Callable[[], T | None]) -> T | None:
        """`check()` (the key comparison: what the key matched, None for a wrong key) for a
        request from `client`; `TooManyRequestsError` instead while `client` is over its
        limit (see the module docstring)."""
        now = self.clock()
        with self._lock:
            record = self._record(client)
            wait = self._wait(record, now)
            proven = record.valid_at is not None and now - record.valid_at < self.proven_for
        if wait and not proven:
            raise _refusal(wait)
        result = check()
        with self._lock:
            record = self._record(client)
            if result is not None:
                record.valid_at = now
                return result
            if wait:
                raise _refusal(wait)
            self._failed(client, record, now)
        return None

    def _record(self, client: str) -> _Address:
        record = self._addresses.get(client)
        if record is None:
            record = self._addresses[client] = _Address()
            if len(self._addresses) > self.capacity:
                self._addresses.popitem(last=False)
        else:
            self._addresses.move_to_end(client)
        return record

    def _wait(self, record: _Address, now: datetime) -> int:
        """Seconds until `record`'s window ends if it is over its limit, else 0."""
        if record.window_end is None or record.failures < self.limit or now >= record.window_end:
            return 0
        return max(1, math.ceil((record.window_end - now).total_seconds()))

    def _failed(self, client: str, record: _Address, now: datetime) -> None:
        if record.window_end is None or now >= record.window_end:
            record.window_end, record.failures = now + self.window, 0
        record.failures += 1
        if record.failures == self.limit:
            log.warning(
                "%d wrong keys from %s within %d s: answering 429 until %s",
                record.failures, client, self.window.total_seconds(), record.window_end.isoformat(),
            )  # fmt: skip


def _refusal(wait: int) -> TooManyRequestsError:
    return TooManyRequestsError(
        f"Too many wrong keys from this address; try again in {wait} seconds.", retry_after=wait
    )
