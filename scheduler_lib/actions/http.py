"""The Http and Https actions: one request (`exchange`, on `http.client`), judged by its status
code.

Choices, and why:
- Redirects are not followed (their bodies are read, like any, only to the history's
  limit). The job's `uri` is the contract: following a 3xx could send the body and the
  job's credentials (user headers, the client certificate) to another host, and would turn
  a POST into a GET that drops the body, then record the success of a request the user
  never configured. A 3xx is therefore not a success; its `Location` is in the history
  message, so the fix (update the uri) is obvious.
- Nothing is read from the environment (no proxies, CA bundles or `.netrc` credentials, as
  requests with `trust_env` would): library code takes its settings from `Settings` only.
- Every connection goes through the egress policy (`egress`, `checked_socket`): a target
  that is, or resolves to, a metadata, link-local or (unless allowed) private address is
  refused, and the refusal is the attempt's failed outcome.
- A new connection per attempt, closed after it: a connection, which may carry one job's
  client certificate, is never reused for another job.
- Only the first 2048 bytes (+1) of the body are read (streamed), since that is all the
  history keeps; a target that answers with a large file costs nothing more.
- The status line decides: if the body cannot be read after it, the attempt still counts as
  the target's answer, and the message says the body was unreadable.
- The timeout is the attempt's deadline, overall: the token request (ActiveDirectoryOAuth),
  connecting, sending, the status line and headers, the body all end by it
  (`checked_socket.Deadline`, enforced at the socket). A per-operation timeout (requests')
  let a target that trickled a byte every two seconds hold an executor thread for minutes.
  A status line that came in time still decides; a body that did not is said to have timed
  out.
"""

from __future__ import annotations

import base64
import codecs
import http.client
import socket
import ssl
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
    exchange,
    require,
)
from scheduler_lib.actions.checked_socket import Deadline
from scheduler_lib.actions.client_certificate import client_ssl_context, load_pfx
from scheduler_lib.actions.destinations import check_identity
from scheduler_lib.actions.egress import EgressDenied, EgressPolicy, policy_for
from scheduler_lib.actions.identity import app_token
from scheduler_lib.actions.oauth import (
    DEFAULT_TOKEN_CACHE,
    TokenCache,
    TokenError,
    acquire_token,
)
from scheduler_lib.actions.pinned import pinned_session
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
    # The user may replace the User-Agent and requests' defaults, never the identifying headers.
    headers = CaseInsensitiveDict({"User-Agent": USER_AGENT, **exchange.DEFAULT_HEADERS})
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
    try:
        _authenticate(
            policy,
            deadline,
            verify,
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
        answer = exchange.send(
            policy, method, uri, headers, data, deadline=deadline, verify=verify,
            ssl_context=client_context,
        )  # fmt: skip
    except EgressDenied as exc:
        return ActionOutcome(False, _refused(host, exc))
    except exchange.UserInfoInUri as exc:
        raise ValidationError(f"{REQUEST_PATH}.uri", str(exc)) from None
    except (OSError, http.client.HTTPException, requests.RequestException) as exc:
        # A send cut off at the deadline may surface as a reset or a broken pipe.
        if isinstance(exc, TimeoutError) or deadline.expired:
            return ActionOutcome(
                False,
                f"Http Action - Request to host '{host}' failed: "
                f"the host did not answer within {timeout:g} seconds",
            )
        return ActionOutcome(
            False, f"Http Action - Request to host '{host}' failed: {_describe(exc, host)}"
        )
    with answer:
        text = _first_bytes_of_body(answer, deadline)
    shown = "\r\n".join(
        f"{name}: {MASK if name.lower() in HIDDEN_HEADERS else value}"
        for name, value in answer.headers
    )
    code = answer.status
    message = (
        f"Http Action - Response from host '{host}': '{code}' "
        f"Response Headers: {shown} Body: {text}"
    )
    return ActionOutcome(200 <= code < 300, message, code, answer.header("Retry-After"))


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
    policy: EgressPolicy,
    deadline: Deadline,
    verify: bool | str,
    headers: CaseInsensitiveDict[str],
    authentication: Mapping[str, Any] | None,
    settings: Settings,
    redactor: Redactor,
    *,
    token_cache: TokenCache,
    timeout: float,
) -> None:
    """Apply the request's authentication to `headers`, registering derived secrets (the
    Basic credential, the access token) with the redactor. A token not in the cache is asked
    for on a `requests` session (`pinned`), within the attempt's deadline."""
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

        def open_session() -> requests.Session:  # for a token not in the cache only
            session = pinned_session(policy, deadline=deadline)
            session.verify = verify
            return session

        token = acquire_token(
            open_session, settings.oauth_authority, authentication, cache=token_cache,
            timeout=timeout,
        )  # fmt: skip
        redactor.add(token)
        headers["Authorization"] = f"Bearer {token}"
    elif kind == "ManagedServiceIdentity":  # api-version 2026-12-01
        token = app_token(require(authentication, "audience", path), settings, cache=token_cache)
        redactor.add(token)
        headers["Authorization"] = f"Bearer {token}"
    elif kind == "ClientCertificate":
        return  # the connection is made with its SSLContext
    else:
        raise ValidationError(f"{path}.type", f"unsupported authentication type {kind!r}")


def _describe(exc: BaseException, host: str) -> str:
    """The cause, readable: its type and message on one line (a refused connection says
    "Connection refused"); a TLS failure and a name that does not resolve in the words
    urllib3 used."""
    if isinstance(exc, requests.RequestException):  # a URL requests could not prepare
        return f"{type(exc).__name__}: {exc}"
    if isinstance(exc, socket.gaierror):
        return f"NameResolutionError: Failed to resolve '{host}' ({exc})"
    if isinstance(exc, http.client.IncompleteRead):
        return "IncompleteRead: the connection closed before the end of the body"
    name = "SSLError" if isinstance(exc, ssl.SSLError) else type(exc).__name__  # as urllib3
    text = str(exc)
    return f"{name}: {text!r}" if "\n" in text or "\r" in text else f"{name}: {text}"


def _first_bytes_of_body(answer: exchange.Answer, deadline: Deadline) -> str:
    try:
        data, _ = exchange.read_capped(answer, BODY_LIMIT)
    except (OSError, http.client.HTTPException, exchange.DecodingError) as exc:
        if deadline.expired:
            return (
                "<the body did not arrive within the attempt's timeout of "
                f"{deadline.seconds:g} seconds>"
            )
        return f"<the body could not be read: {_describe(exc, '')}>"
    # Drop a multi-byte character cut in half by the limit instead of showing U+FFFD for it.
    return codecs.getincrementaldecoder("utf-8")("replace").decode(data, final=False)
