"""Cross-site request forgery: every request that changes something must carry the
session's token and come from this site.

Two independent checks, both required: the token (HMAC of the session id with the session's
secret, sent as the `csrf` form field or the `X-CSRF-Token` header; another site can neither
read nor compute it), and the browser's own word on where the request comes from
(`Sec-Fetch-Site: same-origin`, and an `Origin` naming this site when sent). Which origins
are this site is `front_end`'s decision: the request's `Host`, the public URL,
App Service's host name, and `X-Forwarded-Host` only from a trusted proxy (a client that
sends one itself proves nothing). The cookie's SameSite=Strict is a third line. A failed
check is a 403, never a silent no-op.
"""

from __future__ import annotations

import hashlib
import hmac

from starlette.requests import Request

from scheduler_lib.dashboard.session import Session
from scheduler_lib.front_end import FrontEnd

HEADER = "x-csrf-token"
FIELD = "csrf"


class CsrfRejected(Exception):
    """The request failed a CSRF check; the message says which (shown on the 403 page)."""


def token_for(session: Session) -> str:
    return hmac.new(
        session.secret, ("csrf|" + session.session_id).encode(), hashlib.sha256
    ).hexdigest()


def check_origin(request: Request) -> None:
    """Refuse a request another site made the browser send (used also by sign-in, which has
    no session yet)."""
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        raise CsrfRejected(f"cross-site request refused (Sec-Fetch-Site: {site})")
    origin = request.headers.get("origin")
    front_end: FrontEnd = request.app.state.front_end
    if origin is not None and not front_end.is_this_site(origin, request.scope):
        raise CsrfRejected("cross-origin request refused (Origin does not match)")


def check(request: Request, session: Session, presented: str | None) -> None:
    """Both checks for a mutating request of a signed-in session."""
    check_origin(request)
    given = presented or request.headers.get(HEADER) or ""
    if not hmac.compare_digest(given.encode(), token_for(session).encode()):
        raise CsrfRejected("missing or wrong CSRF token: reload the page and try again")
