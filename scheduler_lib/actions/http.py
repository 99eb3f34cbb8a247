"""The Http and Https actions: one request with `requests`, judged by its status code.

Choices, and why:
- Redirects are not followed (nor their bodies read: see `pinned`). The job's `uri` is the
  contract: following a 3xx could send the body and the job's credentials (user headers,
  the client certificate) to another host, and would turn a POST into a GET that drops the
  body, then record the success of a request the user never configured. A 3xx is therefore
  not a success; its `Location` is in the history message, so the fix (update the uri) is
  obvious.
- `trust_env` is off: requests would otherwise read proxies, CA bundles and `.netrc`
  credentials from the environment, and library code takes its settings from `Settings` only.
- Every connection goes through the egress policy (`egress`, `pinned`): a target that is,
  or resolves to, a metadata, link-local or (unless allowed) private address is refused, and
  the refusal is the attempt's failed outcome.
- A new Session per attempt: a pooled connection, which may carry one job's client
  certificate, is never reused for another job.
- Only the first 2048 bytes (+1) of the body are read (streamed), since that is all the
  history keeps; a target that answers with a large file costs nothing more.
- The status line decides: if the body cannot be read after it, the attempt still counts as
  the target's answer, and the message says the body was unreadable.
- The timeout is the attempt's deadline, overall: the token request (ActiveDirectoryOAuth),
  connecting, sending, the status line and headers, the body all end by it (`pinned.Deadline`,
  enforced at the socket). requests' own timeout is per socket operation: a target that
  trickled a byte every two seconds held an executor thread for minutes. A status line that
  came in time still decides; a body that did not is said to have timed out.
"""

from __future__ import annotations

import base64
import codecs
import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.structures import CaseInsensitiveDict

from scheduler_lib.actions import (
    ACTION_TIMEOUT_SECONDS,
    BODY_LIMIT,
    ActionOutcome,
    ExecutionContext,
    require,
)
from scheduler_lib.actions.client_certificate import client_ssl_context, load_pfx
from scheduler_lib.actions.destinations import check_identity
from scheduler_lib.actions.egress import EgressDenied, policy_for
from scheduler_lib.actions.identity import app_token
from scheduler_lib.actions.oauth import (
    DEFAULT_TOKEN_CACHE,
    TokenCache,
    TokenError,
    acquire_token,
)
from scheduler_lib.actions.pinned import Deadline, pinned_session, read_capped
from scheduler_lib.actions.redaction import MASK, Redactor
from scheduler_lib.actions.signing import signature_headers
from scheduler_lib.config import Settings
from scheduler_lib.errors import ValidationError
from scheduler_lib.wire import attempt_timeout
from scheduler_lib.wire.headers import client_header_refusal

USER_AGENT = "azure-scheduler-functions (Azure Scheduler compatible)"
REQUEST_PATH = "action.request"
#: Response headers whose values are never written to the history.
HIDDEN_HEADERS = frozenset({"authorization", "proxy-authorization"})


def execute(
    action: Mapping[str, Any],
    context: ExecutionContext,
    settings: Settings,
    *,
    redactor: Redactor,
    timeout: float = ACTION_TIMEOUT_SECONDS,
    verify: bool | str = True,
    token_cache: TokenCache = DEFAULT_TOKEN_CACHE,
) -> ActionOutcome:
    """Send the action's request once. `verify` is True (system CAs) or a CA bundle path;
    `timeout` is the attempt's deadline unless the action has its own `timeout`."""
    request = require(action, "request", "action")
    uri = require(request, "uri", REQUEST_PATH)
    method = require(request, "method", REQUEST_PATH).upper()
    host = urlsplit(uri).hostname or uri
    own = request.get("headers") or {}
    _check_client_headers(own)
    # The user may replace the User-Agent, never the identifying headers.
    headers = CaseInsensitiveDict({"User-Agent": USER_AGENT})
    headers.update(own)
    headers.update(_identifying_headers(context))
    body = request.get("body")
    data = body.encode() if body is not None else None
    if context.signing_secrets:  # after the user's headers: theirs never replace these
        sent = int((context.sent_at or context.expected_execution_time).timestamp())
        headers.update(
            signature_headers(context.signing_secrets, context.webhook_id, sent, data or b"")
        )

    authentication = request.get("authentication")
    timeout = attempt_timeout.seconds(action, default=timeout)  # the job's own, if it has one
    deadline = Deadline(timeout)
    policy = policy_for(settings)
    try:
        policy.check_host(host)
    except EgressDenied as exc:
        return ActionOutcome(False, _refused(host, exc))
    # Before a token is asked for: the operator may have closed the audience or its host
    # since the job was stored (ValidationError: a failed attempt naming the setting).
    check_identity(request, settings)
    client_context = _client_certificate_context(authentication, verify)
    with pinned_session(policy, ssl_context=client_context, deadline=deadline) as session:
        session.verify = verify
        try:
            _authenticate(
                session,
                headers,
                authentication,
                settings,
                redactor,
                token_cache=token_cache,
                timeout=timeout,
            )
        except TokenError as exc:
            return ActionOutcome(False, f"Http Action - {exc.message}", exc.status_code)
        except EgressDenied as exc:
            return ActionOutcome(False, f"Http Action - the token endpoint: {exc.message}")
        try:
            response = session.request(
                method,
                uri,
                headers=headers,
                data=data,
                timeout=timeout,
                allow_redirects=False,
                stream=True,
            )
        except EgressDenied as exc:
            return ActionOutcome(False, _refused(host, exc))
        except requests.RequestException as exc:
            # A send cut off at the deadline surfaces as a ConnectionError, not a Timeout.
            if isinstance(exc, requests.Timeout) or deadline.expired:
                return ActionOutcome(
                    False,
                    f"Http Action - Request to host '{host}' failed: "
                    f"the host did not answer within {timeout:g} seconds",
                )
            return ActionOutcome(
                False, f"Http Action - Request to host '{host}' failed: {_describe(exc)}"
            )
        with response:
            text = _first_bytes_of_body(response, deadline)
    code = response.status_code
    shown = "\r\n".join(
        f"{name}: {MASK if name.lower() in HIDDEN_HEADERS else value}"
        for name, value in response.headers.items()
    )
    message = (
        f"Http Action - Response from host '{host}': '{code}' "
        f"Response Headers: {shown} Body: {text}"
    )
    return ActionOutcome(200 <= code < 300, message, code, response.headers.get("Retry-After"))


def _check_client_headers(headers: Mapping[str, str]) -> None:
    """A job stored before Host, framing and hop-by-hop headers were refused fails its
    attempt, naming the header, before anything is sent: the request without the header
    would not be the one the job describes either (another virtual host, another framing).
    The history says what to remove; the job is kept as it is."""
    for name in headers:
        refusal = client_header_refusal(name)
        if refusal:
            raise ValidationError(
                f"{REQUEST_PATH}.headers.{name}",
                f"{refusal}; nothing was sent: remove it from the job's headers "
                f'(PATCH {{"{name}": null}} into them)',
            )


def _refused(host: str, exc: EgressDenied) -> str:
    return f"Http Action - Request to host '{host}' refused by the egress policy: {exc.message}"


def _client_certificate_context(
    authentication: Mapping[str, Any] | None, verify: bool | str
) -> Any:
    """The SSLContext holding the job's client certificate, for ClientCertificate auth."""
    if authentication is None or authentication.get("type") != "ClientCertificate":
        return None
    path = f"{REQUEST_PATH}.authentication"
    client = load_pfx(
        require(authentication, "pfx", path), authentication.get("password"), field=f"{path}.pfx"
    )
    return client_ssl_context(client, verify if isinstance(verify, str) else None)


def _identifying_headers(context: ExecutionContext) -> dict[str, str]:
    """`context.identifiers()`, and a client request id to tell attempts apart."""
    return {**context.identifiers(), "x-ms-client-request-id": str(uuid.uuid4())}


def _authenticate(
    session: requests.Session,
    headers: CaseInsensitiveDict[str],
    authentication: Mapping[str, Any] | None,
    settings: Settings,
    redactor: Redactor,
    *,
    token_cache: TokenCache,
    timeout: float,
) -> None:
    """Apply the request's authentication to `session`/`headers`, registering derived secrets
    (the Basic credential, the access token) with the redactor."""
    kind = authentication.get("type") if authentication is not None else None
    if authentication is None or kind in (None, "NotSpecified"):
        return
    path = f"{REQUEST_PATH}.authentication"
    if kind == "Basic":
        username = require(authentication, "username", path)
        password = authentication.get("password") or ""
        credential = base64.b64encode(f"{username}:{password}".encode()).decode()
        redactor.add(credential)
        headers["Authorization"] = f"Basic {credential}"
    elif kind == "ActiveDirectoryOAuth":
        token = acquire_token(
            session, settings.oauth_authority, authentication, cache=token_cache, timeout=timeout
        )
        redactor.add(token)
        headers["Authorization"] = f"Bearer {token}"
    elif kind == "ManagedServiceIdentity":  # api-version 2026-12-01
        token = app_token(require(authentication, "audience", path), settings, cache=token_cache)
        redactor.add(token)
        headers["Authorization"] = f"Bearer {token}"
    elif kind == "ClientCertificate":
        return  # the session was built with its SSLContext
    else:
        raise ValidationError(f"{path}.type", f"unsupported authentication type {kind!r}")


def _describe(exc: requests.RequestException) -> str:
    """The root cause of a requests error, without urllib3's retry wrapping
    ("Max retries exceeded with url ... Caused by ...")."""
    cause: BaseException = exc
    if exc.args and isinstance(exc.args[0], BaseException):
        cause = exc.args[0]
    cause = getattr(cause, "reason", None) or cause
    return f"{type(cause).__name__}: {cause}"


def _first_bytes_of_body(response: requests.Response, deadline: Deadline) -> str:
    try:
        data, _ = read_capped(response, BODY_LIMIT)
    except requests.RequestException as exc:
        if deadline.expired:
            return (
                "<the body did not arrive within the attempt's timeout of "
                f"{deadline.seconds:g} seconds>"
            )
        return f"<the body could not be read: {type(exc).__name__}>"
    # Drop a multi-byte character cut in half by the limit instead of showing U+FFFD for it.
    return codecs.getincrementaldecoder("utf-8")("replace").decode(data, final=False)
