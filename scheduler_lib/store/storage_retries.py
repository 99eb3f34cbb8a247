"""azure-core's `RetryPolicy.send` loop for `store/storage_pipeline.StoragePipeline`, written
out around the policy's own public helpers, so that the store's requests are retried
exactly as azure-core's `RetryPolicy` (with `StoragePatience`'s options) retries them.

Why not the policy's own `send`: on every request, also the many that are answered the
first time, it sets up what none of the store's requests has (the position of a body
stream and of uploaded files, a transport's `connection_config`), ~17 µs of a ~420 µs point
read measured with real requests (docs/cost.md, "Storage requests without azure-core's
pipeline runner (ninth step)"). Everything that decides is azure-core's: the options and
their per-request overrides (`configure_retries`: `retry_on_methods` for the queue's sends),
whether an answer is retried (`is_retry`: 408, 429, 500, 502, 503, 504, any status with
Retry-After, a POST's 500/503/504), the counts per kind of failure and when they are spent
(`increment`), the pause (`sleep`: Retry-After, else the fixed or exponential backoff,
through the transport's `sleep`) and the history (`update_context`). Written here: the loop
itself, the total time (`timeout`: each try's time taken from it; none left, the next try is
azure-core's `Service...TimeoutError`), a try's `connection_timeout` option held to what is
left, a transport error retried only for a method in `methods` (azure-core's private
`_is_method_retryable`, without an answer), and a credential's `ClientAuthenticationError`
never retried. The requests' bodies are bytes, never a stream to rewind.

tests/store/test_storage_pipeline.py sends the same scripted failures through this and
through azure-core's `PipelineClient` with its own `RetryPolicy`, and compares the outcome,
the tries and the pauses.
"""

from __future__ import annotations

import time
from typing import Any, cast

from azure.core.exceptions import (
    AzureError,
    ClientAuthenticationError,
    ServiceRequestError,
    ServiceRequestTimeoutError,
    ServiceResponseTimeoutError,
)
from azure.core.pipeline import PipelineRequest, PipelineResponse
from azure.core.pipeline.policies import HTTPPolicy, RetryPolicy
from azure.core.rest import HttpRequest, HttpResponse


class Retries(HTTPPolicy[HttpRequest, HttpResponse]):
    """The next node sent to until `policy` says no more, as `policy.send` would."""

    def __init__(self, policy: RetryPolicy[HttpRequest, HttpResponse]) -> None:
        super().__init__()
        self.policy = policy

    def send(
        self, request: PipelineRequest[HttpRequest]
    ) -> PipelineResponse[HttpRequest, HttpResponse]:
        policy, options = self.policy, request.context.options
        settings = policy.configure_retries(options)
        transport = cast(Any, request.context.transport)
        left: float = settings["timeout"]
        response_error = True  # which timeout error to raise when no time is left
        while True:
            started = time.time()
            try:
                if left <= 0:
                    if response_error:
                        raise ServiceResponseTimeoutError("Response timeout")
                    raise ServiceRequestTimeoutError("Request timeout")
                if options.get("connection_timeout"):
                    options["connection_timeout"] = min(options["connection_timeout"], left)
                request.context["retry_count"] = len(settings["history"])
                response = self.next.send(request)
                if policy.is_retry(settings, response) and policy.increment(
                    settings, response=response
                ):
                    policy.sleep(settings, transport, response=response)
                    response_error = True
                    continue
                break
            except ClientAuthenticationError:
                raise  # the credential could not authorize it: no answer will come
            except AzureError as error:
                method = request.http_request.method.upper()
                if (
                    left > 0
                    and method in settings["methods"]
                    and policy.increment(settings, response=request, error=error)
                ):
                    policy.sleep(settings, transport)
                    response_error = not isinstance(error, ServiceRequestError)
                    continue
                raise error
            finally:
                left -= time.time() - started
        policy.update_context(response.context, settings)
        return response
