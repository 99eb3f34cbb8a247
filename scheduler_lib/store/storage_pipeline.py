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
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections.abc import Callable
from typing import Any, cast
from wsgiref.handlers import format_date_time

from azure.core import PipelineClient
from azure.core.credentials import AzureNamedKeyCredential, AzureSasCredential
from azure.core.pipeline import PipelineRequest
from azure.core.pipeline.policies import (
    AzureSasCredentialPolicy,
    BearerTokenCredentialPolicy,
    DistributedTracingPolicy,
    HttpLoggingPolicy,
    RetryPolicy,
    SansIOHTTPPolicy,
    UserAgentPolicy,
)
from azure.core.rest import HttpRequest, HttpResponse

from scheduler_lib.storage_account import client_transport
from scheduler_lib.storage_patience import StoragePatience
from scheduler_lib.storage_transport import ConnectionPools

#: The scope azure-data-tables and azure-storage-queue ask a token credential for (no
#: audience is configured).
STORAGE_SCOPE = "https://storage.azure.com/.default"

SharedKey = Callable[[AzureNamedKeyCredential], SansIOHTTPPolicy[HttpRequest, HttpResponse]]


def storage_pipeline(
    base: str,
    credential: Any,
    *,
    shared_key: SharedKey,
    connections: ConnectionPools,
    patience: StoragePatience,
    verify: str | None,
    moniker: str,
) -> PipelineClient[HttpRequest, HttpResponse]:
    """A `PipelineClient` for the service at `base`, signing with `credential` (an account
    key through `shared_key`, a SAS or a token credential)."""
    options: dict[str, Any] = dict(patience.transport_options())
    if verify:
        options["connection_verify"] = verify
    policies = [
        UserAgentPolicy(sdk_moniker=moniker),
        RetryPolicy(**patience.retry_options()),
        DatePolicy(),  # after the retry policy: each try is dated and signed afresh
        credential_policy(credential, shared_key),
        DistributedTracingPolicy(),  # as in the SDKs' pipelines: a span per request,
        HttpLoggingPolicy(),  # and its log line when azure-core's logger is at INFO
    ]
    transport = client_transport(connections, options)
    return PipelineClient(base, policies=policies, transport=transport)


class DatePolicy(SansIOHTTPPolicy[HttpRequest, HttpResponse]):
    """The `x-ms-date` every storage request carries (and a SharedKey signature covers)."""

    def on_request(self, request: PipelineRequest[HttpRequest]) -> None:
        request.http_request.headers["x-ms-date"] = format_date_time(time.time())


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
