"""Who is signed in to the dashboard: the session cookie, and App Service authentication.

A browser cannot send `Authorization: Bearer <key>` on a link or a form, so the sign-in page
exchanges a key for a cookie. The cookie holds a random session id and its expiry, signed
(`itsdangerous`, the signer Starlette's own sessions use) with a secret derived from the key
that signed in: HMAC(key, "dashboard-session"). So the cookie never contains the key, and
removing a key from `SCHEDULER_API_KEYS` ends every session it opened (no signature verifies
any more). The signature's timestamp comes from the app's clock, so expiry is testable.
A valid signature is not enough: the session must also still be open in storage
(`store.dashboard_sessions`), which signing out ends for every instance of the app.

With `SCHEDULER_DASHBOARD_EASY_AUTH=true`, App Service authentication (Easy Auth, Entra ID)
in front of the app has already signed the user in and says who in `X-MS-CLIENT-PRINCIPAL-NAME`
(and the base64 JSON `X-MS-CLIENT-PRINCIPAL`). Only then are those headers trusted: without
Easy Auth anyone can send them, which is why the setting is off by default.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from datetime import timedelta

from itsdangerous import BadSignature, TimestampSigner
from starlette.requests import Request

from scheduler_lib.timeutil import Clock

COOKIE = "scheduler_ui"
#: A session lasts a working day; signing in again is one paste of the key.
MAX_AGE = timedelta(hours=8)
PRINCIPAL_HEADER = "x-ms-client-principal-name"
PRINCIPAL_JSON_HEADER = "x-ms-client-principal"


@dataclass(frozen=True)
class Session:
    """A signed-in user: the session id (or the Easy Auth principal) and the secret that
    signs its CSRF tokens. `who` is what the page shows; never a key."""

    session_id: str
    secret: bytes
    who: str
    easy_auth: bool = False


def derive_secret(key: str, purpose: str = "dashboard-session") -> bytes:
    """A secret for one purpose from an API key; the key itself never leaves the server."""
    return hmac.new(key.encode(), purpose.encode(), hashlib.sha256).digest()


class _ClockSigner(TimestampSigner):
    """itsdangerous' timestamp signer on the app's clock instead of `time.time()`."""

    def __init__(self, secret: bytes, *, clock: Clock) -> None:
        super().__init__(secret, salt="scheduler-dashboard")
        self._clock = clock

    def get_timestamp(self) -> int:
        return int(self._clock().timestamp())


def matching_key(presented: str, keys: tuple[str, ...]) -> str | None:
    """The configured key equal to `presented`, comparing with every key in constant time
    (as `api.middleware.authorized` does), or None."""
    found = None
    for key in keys:
        if hmac.compare_digest(presented.encode(), key.encode()):
            found = key
    return found


def new_session_id() -> str:
    return secrets.token_urlsafe(18)


def new_cookie(key: str, session_id: str, *, clock: Clock) -> str:
    """A signed session cookie value for a user who presented `key`."""
    payload = json.dumps({"sid": session_id})
    return _ClockSigner(derive_secret(key), clock=clock).sign(payload).decode()


def read_cookie(value: str | None, keys: tuple[str, ...], *, clock: Clock) -> Session | None:
    """The session a cookie proves, or None: unsigned, tampered with, expired, or signed by a
    key that is no longer configured. (Whether it is still open, the caller asks storage.)"""
    if not value:
        return None
    for key in keys:
        secret = derive_secret(key)
        try:
            raw = _ClockSigner(secret, clock=clock).unsign(
                value, max_age=int(MAX_AGE.total_seconds())
            )
        except BadSignature:  # also SignatureExpired, a subclass
            continue
        try:
            session_id = str(json.loads(raw)["sid"])
        except (ValueError, KeyError, TypeError):
            return None
        return Session(session_id, secret, "API key")
    return None


def easy_auth_session(request: Request, keys: tuple[str, ...]) -> Session | None:
    """The Easy Auth principal as a session (trusted only when the setting says so; the
    caller checks). Its CSRF secret is derived from the first API key and the principal."""
    name = request.headers.get(PRINCIPAL_HEADER) or _principal_from_json(
        request.headers.get(PRINCIPAL_JSON_HEADER)
    )
    if not name or not keys:
        return None
    secret = derive_secret(keys[0], "dashboard-easy-auth|" + name)
    return Session("easyauth:" + name, secret, name, easy_auth=True)


def _principal_from_json(value: str | None) -> str | None:
    """The user's name from `X-MS-CLIENT-PRINCIPAL` (base64 JSON with `claims`)."""
    if not value:
        return None
    try:
        document = json.loads(base64.b64decode(value))
        claims = {c.get("typ"): c.get("val") for c in document.get("claims", [])}
    except (ValueError, TypeError, AttributeError):
        return None
    for claim in ("name", "preferred_username", document.get("name_typ")):
        if claims.get(claim):
            return str(claims[claim])
    return None


def is_https(request: Request) -> bool:
    """Whether the browser talks https to us (directly, or to the front end that forwards
    to us with `X-Forwarded-Proto`, as App Service does): the cookie is then `Secure`."""
    forwarded = request.headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
    return request.url.scheme == "https" or forwarded == "https"
