"""ActiveDirectoryOAuth: client-credentials tokens from the Azure AD v1 endpoint, cached.

Azure Scheduler asked `{authority}/{tenant}/oauth2/token` for a token with
`resource=<audience>` (the v1 protocol; v2 would need `scope=<audience>/.default` and gives
tokens with a different `aud` claim that existing targets may reject), so we do the same.

Tokens are cached in-process until `refresh_margin` before they expire, so a job that runs
every minute does not ask the identity provider every minute. The cache key includes a SHA-256
digest of the secret: a job with a wrong (or rotated) secret must not ride on a token another
job obtained with the right one. The clock is a parameter so tests can move it; it is a
monotonic clock because only durations (`expires_in`) matter here.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import requests

from scheduler_lib.actions import BODY_LIMIT, require
from scheduler_lib.actions.pinned import read_capped

AUTH_PATH = "action.request.authentication"
#: The most of a token endpoint's answer that is read: a token response is a few KB; a
#: misconfigured authority that answers with a large page is not read into memory.
TOKEN_RESPONSE_LIMIT = 64 * 1024


class TokenError(Exception):
    """No token: the message says why (never with the secret), for the job history."""

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code


@dataclass(frozen=True)
class TokenKey:
    token_url: str
    client_id: str
    audience: str
    secret_digest: str


class TokenCache:
    """Thread-safe in-process token cache (the Functions worker runs invocations in threads)."""

    def __init__(
        self, *, clock: Callable[[], float] = time.monotonic, refresh_margin: float = 300.0
    ) -> None:
        self._clock = clock
        self._refresh_margin = refresh_margin
        self._tokens: dict[TokenKey, tuple[str, float]] = {}
        self._lock = threading.Lock()

    def get(self, key: TokenKey) -> str | None:
        """The cached token, unless it expires within the refresh margin."""
        with self._lock:
            entry = self._tokens.get(key)
            if entry is None:
                return None
            token, expires_at = entry
            if expires_at - self._clock() <= self._refresh_margin:
                del self._tokens[key]
                return None
            return token

    def put(self, key: TokenKey, token: str, expires_in: float) -> None:
        with self._lock:
            self._tokens[key] = (token, self._clock() + expires_in)


#: The process-wide cache used when the caller does not pass one.
DEFAULT_TOKEN_CACHE = TokenCache()


def acquire_token(
    open_session: Callable[[], requests.Session],
    authority: str,
    authentication: Mapping[str, Any],
    *,
    cache: TokenCache,
    timeout: float,
) -> str:
    """A bearer token for the ActiveDirectoryOAuth `authentication`, from cache or the
    token endpoint (on a session from `open_session`, made only then and closed after);
    raises TokenError when the endpoint cannot be reached or refuses."""
    tenant = require(authentication, "tenant", AUTH_PATH)
    client_id = require(authentication, "clientId", AUTH_PATH)
    audience = require(authentication, "audience", AUTH_PATH)
    secret = require(authentication, "secret", AUTH_PATH)
    token_url = f"{authority.rstrip('/')}/{quote(tenant, safe='')}/oauth2/token"
    key = TokenKey(token_url, client_id, audience, hashlib.sha256(secret.encode()).hexdigest())
    cached = cache.get(key)
    if cached is not None:
        return cached
    form = {
        "grant_type": "client_credentials",
        "client_id": client_id,
        "client_secret": secret,
        "resource": audience,
    }
    where = f"from '{token_url}' for audience '{audience}'"
    try:
        with open_session() as session:
            response = session.post(
                token_url, data=form, timeout=timeout, allow_redirects=False, stream=True
            )
            with response:
                content, too_long = read_capped(response, TOKEN_RESPONSE_LIMIT)
    except requests.RequestException as exc:
        raise TokenError(f"Could not get an access token {where}: {exc}") from None
    text = content[:BODY_LIMIT].decode("utf-8", errors="replace")
    if not 200 <= response.status_code < 300:
        raise TokenError(
            f"Could not get an access token {where}: '{response.status_code}' Body: {text}",
            response.status_code,
        )
    if too_long:
        raise TokenError(
            f"The token endpoint answered with more than {TOKEN_RESPONSE_LIMIT} bytes {where}"
        )
    try:
        payload = json.loads(content)
        token = payload["access_token"]
    except (ValueError, KeyError, TypeError):
        raise TokenError(f"The token endpoint answered without an access_token {where}") from None
    # Without a readable lifetime the token serves this attempt only.
    with contextlib.suppress(KeyError, TypeError, ValueError):
        cache.put(key, token, float(payload["expires_in"]))
    return token
