"""The one pipeline the store sends storage requests on without an SDK's generated client
(issue 22, docs/cost.md): the Table service's transactions and point requests
(`store/changeset.py`, `store/entity_requests.py`) and the execution queue's message requests
(`store/queue_requests.py`).

Why one: what those requests need around them is the same for both services, and it is what
the SDKs' clients have (the same connections, TLS bundle, retries and timeouts, credential),
so each mechanism is written once here and only the request and its signature differ:
- azure-core's public policies: a user agent, `RetryPolicy` with the store's
  `StoragePatience`, a tracing span and azure-core's HTTP log line per request;
- the `x-ms-date` and the signature added after the retry policy, so each try is dated and
  signed afresh (a retry a second later with the first try's date would still pass, but a
  signature must cover the date it is sent with);
- the credential as the SDKs take it: an account key (each service's own SharedKey form, given
  as `shared_key`), a SAS (azure-core's `AzureSasCredentialPolicy`), or a token credential
  (the managed identity: `BearerTokenCredentialPolicy` for the scope both SDKs ask for);
- `storage_account.client_transport` over the service's `ConnectionPools`, so requests are
  counted by stage for the cost benchmark as the SDK client's are.

Why not azure-core's `PipelineClient` (docs/cost.md, "Storage requests without azure-core's
pipeline runner (ninth step)"): its runner wraps every SansIO policy in a node of its own
(on_request, on_response and on_exception each called through `await_result`), and the
tracing and logging policies do their bookkeeping on every try (options popped, context
entries set, a span looked for at the end) even when there is no tracer and the logger is
not at INFO: with the runner's request and context objects, a cProfile of an occurrence put
azure-core's pipeline at ~15 % of the executor's time, a fifth of a point read's client CPU
(bench/request_floor.py). `StoragePipeline` chains the same policy objects by azure-core's
own `HTTPPolicy.next` contract: the user agent, then the retries
(`store/storage_retries.py`: `RetryPolicy.send`'s loop around the policy's own public
helpers, which decide), then per try the date and the credential
(`BearerTokenCredentialPolicy` as the policy node it is: its token reuse and 401
challenge), then the transport. What is written here instead of azure-core's
runner is `_around`: SansIO policies called as its `_SansIOHTTPPolicyRunner` calls them
(on_request in order, on_response in reverse, on_exception for those already entered), and
the choice, per try, to leave out the tracing and logging policies when they would do
nothing: no tracer configured (`settings.tracing_enabled()`) and no per-request tracing
option, azure-core's HTTP logger not enabled at its level and no per-request logger.
tests/store/test_storage_pipeline.py runs both pipelines on the same requests.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import Any, cast
from wsgiref.handlers import format_date_time

from azure.core.credentials import AzureNamedKeyCredential, AzureSasCredential
from azure.core.pipeline import PipelineContext, PipelineRequest, PipelineResponse
from azure.core.pipeline.policies import (
    AzureSasCredentialPolicy,
    BearerTokenCredentialPolicy,
    DistributedTracingPolicy,
    HttpLoggingPolicy,
    HTTPPolicy,
    RetryPolicy,
    SansIOHTTPPolicy,
    UserAgentPolicy,
)
from azure.core.pipeline.transport import HttpTransport
from azure.core.rest import HttpRequest, HttpResponse
from azure.core.settings import settings

from scheduler_lib.storage_account import client_transport
from scheduler_lib.storage_patience import StoragePatience
from scheduler_lib.storage_transport import ConnectionPools
from scheduler_lib.store.storage_retries import Retries

#: The scope azure-data-tables and azure-storage-queue ask a token credential for (no
#: audience is configured).
STORAGE_SCOPE = "https://storage.azure.com/.default"

SharedKey = Callable[[AzureNamedKeyCredential], SansIOHTTPPolicy[HttpRequest, HttpResponse]]
Request = PipelineRequest[HttpRequest]
Response = PipelineResponse[HttpRequest, HttpResponse]
SansIO = SansIOHTTPPolicy[Any, Any]  # azure-core's own policies are typed on either request
#: Per-request options the tracing and logging policies read (none of the store's requests
#: passes any): with one, both run as in azure-core's pipeline.
_OBSERVING_OPTIONS = frozenset({"tracing_options", "network_span_namer", "tracing_attributes",
                                "logger", "http_logging_level"})  # fmt: skip


def storage_pipeline(
    base: str,
    credential: Any,
    *,
    shared_key: SharedKey,
    connections: ConnectionPools,
    patience: StoragePatience,
    verify: str | None,
    moniker: str,
) -> StoragePipeline:
    """The pipeline of the service at `base`, signing with `credential` (an account key
    through `shared_key`, a SAS or a token credential)."""
    options: dict[str, Any] = dict(patience.transport_options())
    if verify:
        options["connection_verify"] = verify
    return StoragePipeline(
        client_transport(connections, options),
        UserAgentPolicy(sdk_moniker=moniker),
        RetryPolicy(**patience.retry_options()),
        DatePolicy(),  # after the retry policy: each try is dated and signed afresh
        credential_policy(credential, shared_key),
    )


class StoragePipeline:
    """azure-core's policies for one service, chained without its `Pipeline` runner: what
    `PipelineClient(base, policies=[user_agent, retry, date, credential,
    DistributedTracingPolicy(), HttpLoggingPolicy()], transport=transport)` sends, the
    tracing and logging policies run only when they would do something."""

    def __init__(
        self,
        transport: HttpTransport[HttpRequest, HttpResponse],
        user_agent: UserAgentPolicy,
        retry: RetryPolicy[HttpRequest, HttpResponse],
        date: SansIO,
        credential: SansIO | HTTPPolicy[HttpRequest, HttpResponse],
    ) -> None:
        self.transport = transport
        self.tracing: DistributedTracingPolicy[HttpRequest, HttpResponse] = (
            DistributedTracingPolicy()
        )
        self.logging = HttpLoggingPolicy()
        #: The policies in the order azure-core's pipeline would run them.
        self.policies = (user_agent, retry, date, credential, self.tracing, self.logging)
        per_try: list[SansIO] = [date]
        nodes: list[HTTPPolicy[HttpRequest, HttpResponse]] = [
            _SansIOSteps([user_agent]),
            Retries(retry),
        ]
        if isinstance(credential, SansIOHTTPPolicy):
            per_try.append(credential)
            nodes.append(_SansIOSteps(per_try))
        else:  # the token's policy is a node of its own (it answers a 401 challenge)
            nodes += [_SansIOSteps(per_try), credential]
        nodes.append(_Send(self))
        for node, following in pairwise(nodes):
            node.next = following
        self._first = nodes[0]

    def send_request(self, request: HttpRequest, **options: Any) -> HttpResponse:
        """`PipelineClient.send_request(request, **options)`: the answer, whatever its
        status; azure-core's errors when there is none."""
        context = PipelineContext(self.transport, stream=False, **options)
        return self._first.send(PipelineRequest(request, context)).http_response

    def observers(self, options: dict[str, Any]) -> list[SansIO]:
        """The tracing and logging policies that would act on a try with these options."""
        if not _OBSERVING_OPTIONS.isdisjoint(options):
            return [self.tracing, self.logging]
        found: list[SansIO] = []
        if settings.tracing_enabled():
            found.append(self.tracing)
        if self.logging.logger.isEnabledFor(self.logging.http_logging_level):
            found.append(self.logging)
        return found


class _SansIOSteps(HTTPPolicy[HttpRequest, HttpResponse]):
    """SansIO policies around the next node, each as azure-core's runner runs it (those
    that answer nothing, as the user agent, the date and the signatures, only asked
    on_request: their on_response and on_exception are `SansIOHTTPPolicy`'s, which do
    nothing)."""

    def __init__(self, policies: Sequence[SansIO]) -> None:
        super().__init__()
        self._policies = policies
        self._requests_only = all(_requests_only(policy) for policy in policies)

    def send(self, request: Request) -> Response:
        if self._requests_only:
            for policy in self._policies:
                policy.on_request(request)
            return self.next.send(request)
        return _around(self._policies, request, self.next.send)


def _requests_only(policy: SansIO) -> bool:
    kind = type(policy)
    return (
        kind.on_response is SansIOHTTPPolicy.on_response
        and kind.on_exception is SansIOHTTPPolicy.on_exception
    )


class _Send(HTTPPolicy[HttpRequest, HttpResponse]):
    """The try: the tracing and logging policies that would act on it, around the
    transport (azure-core's `_TransportRunner`)."""

    def __init__(self, pipeline: StoragePipeline) -> None:
        super().__init__()
        self._pipeline = pipeline

    def send(self, request: Request) -> Response:
        observers = self._pipeline.observers(request.context.options)
        if not observers:
            return self._transmit(request)
        return _around(observers, request, self._transmit)

    def _transmit(self, request: Request) -> Response:
        options = request.context.options
        options.pop("tracing_options", None)  # as azure-core's runner leaves it out
        answer = self._pipeline.transport.send(request.http_request, **options)
        return PipelineResponse(request.http_request, answer, context=request.context)


def _around(
    policies: Sequence[SansIO], request: Request, send: Callable[[Request], Response]
) -> Response:
    """`send` inside `policies` as azure-core's `_SansIOHTTPPolicyRunner` nests them: each
    one's on_request in order; on the way back each one's on_response in reverse; when
    anything inside a policy raises, its on_exception (in the except block: the tracing
    policy reads `sys.exc_info()`), then the error goes on outwards."""
    entered = 0
    try:
        for policy in policies:
            policy.on_request(request)
            entered += 1
        response = send(request)
    except Exception:
        for policy in reversed(policies[:entered]):
            policy.on_exception(request)
        raise
    for index in range(len(policies) - 1, -1, -1):
        try:
            policies[index].on_response(request, response)
        except Exception:
            for policy in reversed(policies[:index]):
                policy.on_exception(request)
            raise
    return response


class DatePolicy(SansIOHTTPPolicy[HttpRequest, HttpResponse]):
    """The `x-ms-date` every storage request carries (and a SharedKey signature covers),
    read from `clock` (seconds since the epoch) on each try."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        super().__init__()
        self._clock = clock

    def on_request(self, request: PipelineRequest[HttpRequest]) -> None:
        request.http_request.headers["x-ms-date"] = format_date_time(self._clock())


def credential_policy(credential: Any, shared_key: SharedKey) -> Any:
    """The policy that authorizes each request with `credential`, as the SDKs accept it."""
    if isinstance(credential, AzureNamedKeyCredential):
        return shared_key(credential)
    if isinstance(credential, AzureSasCredential):
        return AzureSasCredentialPolicy(credential)
    if hasattr(credential, "get_token"):
        return BearerTokenCredentialPolicy(cast(Any, credential), STORAGE_SCOPE)
    raise TypeError(f"Unsupported credential: {type(credential)}")


def signature(key: str, text: str) -> str:
    """The base64 HMAC-SHA256 of `text` with the account key `key` (base64), the signature of
    both SharedKey forms."""
    digest = hmac.new(base64.b64decode(key), text.encode("utf-8"), hashlib.sha256).digest()
    return base64.b64encode(digest).decode()
