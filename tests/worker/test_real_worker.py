"""`function_app.py` loaded and run by Azure's own Python worker code (`azure-functions-runtime`,
see tests/worker/host.py): the functions and bindings the host would register, and each kind
of function invoked through the worker's binding conversion against a real Azurite and a real
HTTP target. Unlike tests/test_function_app.py, nothing here calls the app's functions or
`get_functions()` directly: what the worker rejects, the host never runs."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from types import ModuleType
from typing import Any

import azure.functions as func
import pytest
from azure_functions_runtime import handle_event

from devtools.azurite import ROOT, Azurite
from scheduler_lib.config import Settings
from scheduler_lib.dispatch import ControlMessage
from scheduler_lib.domain.messages import ExecutionMessage, batch_json
from tests.support.http_target import HttpTarget
from tests.worker.host import (
    SUCCESS,
    FunctionsHost,
    http_data,
    message_text,
    queue_data,
    running_host,
    timer_data,
)

KEY = "worker-key"
COLLECTION = (
    "https://app.example/api/subscriptions/s1/resourceGroups/rg1/providers/Microsoft.Scheduler"
    "/jobCollections/c1"
)
STANDARD = {"location": "westeurope", "properties": {"sku": {"name": "Standard"}}}


def app_settings(settings: Settings, azurite: Azurite) -> dict[str, str]:
    """The app settings Azure sets (infra/app/api.bicep), on this test's storage."""
    return {
        "FUNCTIONS_WORKER_RUNTIME": "python",
        "AzureWebJobsStorage": azurite.connection_string,
        "SCHEDULER_API_KEYS": KEY,
        "SCHEDULER_STORAGE_PREFIX": settings.storage_prefix,
        "SCHEDULER_EXECUTION_QUEUE": f"{settings.storage_prefix}-executions",
        "SCHEDULER_DISPATCH_QUEUE": f"{settings.storage_prefix}-dispatch",
    }


@pytest.fixture
def host(settings: Settings, azurite: Azurite) -> Iterator[FunctionsHost]:
    with running_host(ROOT, app_settings(settings, azurite)) as started:
        yield started


def _app() -> ModuleType:
    """The module the worker imported (its `runtime` reaches this test's storage)."""
    return sys.modules["function_app"]


def test_the_worker_indexes_every_function_with_the_bindings_the_host_registers(
    host: FunctionsHost, settings: Settings
) -> None:
    executions = f"{settings.storage_prefix}-executions"
    queue = {"direction": "IN", "type": "queueTrigger", "name": "msg",
             "connection": "AzureWebJobsStorage"}  # fmt: skip
    timer = {"direction": "IN", "type": "timerTrigger", "name": "timer", "useMonitor": True}
    expected = {
        "http_app_func": {
            "req": {"direction": "IN", "type": "httpTrigger", "name": "req",
                    "authLevel": "ANONYMOUS", "route": "/{*route}"},
            "$return": {"direction": "OUT", "type": "http", "name": "$return"},
        },
        "dispatcher": {"timer": {**timer, "schedule": "0 * * * * *"}},
        "dispatch_pair": {"msg": {**queue, "queueName": f"{settings.storage_prefix}-dispatch"}},
        "executor": {"msg": {**queue, "queueName": executions}},
        "poisoned": {"msg": {**queue, "queueName": f"{executions}-poison"}},
        "notify": {"msg": {**queue, "queueName": f"{executions}-notify"}},
        "housekeeping": {"timer": {**timer, "schedule": "0 17 3 * * *"}},
    }  # fmt: skip
    bindings = {name: f.bindings for name, f in host.functions.items()}
    methods = set(bindings["http_app_func"]["req"].pop("methods"))
    assert bindings == expected
    assert {"GET", "PUT", "PATCH", "POST", "DELETE"} <= methods
    # The typed view the worker sends beside the raw bindings (BindingInfo).
    info = {
        name: {b: (i.type, i.direction) for b, i in f.metadata.bindings.items()}
        for name, f in host.functions.items()
    }
    assert info["http_app_func"] == {"req": ("httpTrigger", 0), "$return": ("http", 1)}
    assert info["executor"] == {"msg": ("queueTrigger", 0)}
    assert {f.metadata.script_file for f in host.functions.values()} == {"function_app.py"}
    # What the worker will convert each trigger to: the functions' own annotations.
    registry = handle_event._functions
    pytypes = {
        f.metadata.name: registry.get_function(f.metadata.function_id).input_types
        for f in host.functions.values()
    }
    assert pytypes["executor"]["msg"].pytype is func.QueueMessage
    assert pytypes["dispatcher"]["timer"].pytype is func.TimerRequest
    assert issubclass(pytypes["http_app_func"]["req"].pytype, func.HttpRequest)


def _http(host: FunctionsHost, method: str, url: str, body: Any = None) -> tuple[int, dict, Any]:
    """One request through the HTTP function; the worker converts both ways."""
    payload = json.dumps(body).encode() if body is not None else b""
    headers = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
    response = host.invoke("http_app_func", http_data(method, url, headers=headers, body=payload))
    assert response.result.status == SUCCESS, response.result.exception.message
    http = response.return_value.http
    text = http.body.bytes or http.body.string.encode()
    return int(http.status_code), dict(http.headers), json.loads(text) if text else None


def test_the_http_function_serves_the_api_through_the_worker(host: FunctionsHost) -> None:
    url = f"{COLLECTION}?api-version=2016-03-01"
    status, _, body = _http(host, "PUT", url, STANDARD)
    assert status in (200, 201), body
    status, headers, body = _http(host, "GET", url)
    assert status == 200 and body["name"] == "c1"
    assert {k.lower() for k in headers} >= {"etag", "content-type"}
    status, _, body = _http(host, "GET", url.replace("2016-03-01", "1999-01-01"))
    assert status == 400 and body["error"]["code"]  # an ARM error, not a worker failure


def test_timer_and_queue_functions_run_through_the_worker_on_real_queues(
    host: FunctionsHost, settings: Settings
) -> None:
    """The dispatcher's tick leaves its pairs on the dispatch queue named by the app setting
    (one, of every shard: none has a cursor or a row yet); each is handed to the dispatch
    function as the host would. A job run
    now (`POST .../run`) leaves its message on the execution queue, and the executor function
    given that message calls the job's HTTP target."""
    runtime = _app().runtime
    now = datetime.now(UTC)
    tick = host.invoke("dispatcher", timer_data(last=now - timedelta(minutes=1), next_=now))
    assert tick.result.status == SUCCESS, tick.result.exception.message
    pairs = list(runtime.dispatch_queue.client.receive_messages(max_messages=32))
    [only] = [ControlMessage.from_json(message_text(pair)) for pair in pairs]
    assert only.shards == tuple(range(settings.dispatch_shards))
    assert runtime.dispatch_queue.name == f"{settings.storage_prefix}-dispatch"
    for pair in pairs:
        data, metadata = queue_data(pair)
        handled = host.invoke("dispatch_pair", data, metadata)
        assert handled.result.status == SUCCESS, handled.result.exception.message
        runtime.dispatch_queue.client.delete_message(pair)

    with HttpTarget() as target:
        _http(host, "PUT", f"{COLLECTION}?api-version=2016-03-01", STANDARD)
        job = f"{COLLECTION}/jobs/j1?api-version=2016-03-01"
        call = {"method": "POST", "uri": target.url_for("/hook"), "body": "from the worker"}
        properties = {"startTime": "2099-01-01T00:00:00Z",
                      "action": {"type": "Http", "request": call}}  # fmt: skip
        status, _, body = _http(host, "PUT", job, {"properties": properties})
        assert status == 201, body
        assert _http(host, "POST", job.replace("?", "/run?"))[0] == 200
        [message] = runtime.queue.client.receive_messages(max_messages=2)
        assert runtime.queue.name == f"{settings.storage_prefix}-executions"
        data, metadata = queue_data(message)
        ran = host.invoke("executor", data, metadata)
        assert ran.result.status == SUCCESS, ran.result.exception.message
        [request] = target.wait_for_requests(1)
        assert request.text == "from the worker"
    status, _, history = _http(host, "GET", job.replace("?", "/history?"))
    assert [h["properties"]["status"] for h in history["value"]] == ["Completed"]

    # A malformed message fails the invocation (the host retries, then poisons it), and the
    # poison-queue function takes it without failing.
    runtime.queue.send_body("not a message")
    [bad] = runtime.queue.client.receive_messages(max_messages=1)
    failed = host.invoke("executor", *queue_data(bad))
    assert failed.result.status == 0 and "not a message" not in failed.result.exception.message
    assert "ValidationError" in failed.result.exception.message
    assert host.invoke("poisoned", *queue_data(bad)).result.status == SUCCESS
    swept = host.invoke("housekeeping", timer_data(last=now - timedelta(days=1), next_=now))
    assert swept.result.status == SUCCESS, swept.result.exception.message


def test_the_executor_function_runs_a_batch_message_through_the_worker(
    host: FunctionsHost,
) -> None:
    """One queue message carrying two attempts (`batch_json`), handed to the executor
    function as the host would: one invocation, both members run (on the executor's member
    threads inside the worker), each in its own job's history."""
    runtime = _app().runtime
    with HttpTarget() as target:
        _http(host, "PUT", f"{COLLECTION}?api-version=2016-03-01", STANDARD)
        jobs = [f"{COLLECTION}/jobs/b{i}?api-version=2016-03-01" for i in range(2)]
        for job in jobs:
            call = {"method": "POST", "uri": target.url_for("/hook"), "body": job[-30:]}
            properties = {"startTime": "2099-01-01T00:00:00Z",
                          "action": {"type": "Http", "request": call}}  # fmt: skip
            assert _http(host, "PUT", job, {"properties": properties})[0] == 201
            assert _http(host, "POST", job.replace("?", "/run?"))[0] == 200
        runs = []
        while len(runs) < 2:  # both runs were sent before the PUT/POSTs answered
            runs += runtime.queue.receive(max_messages=2)
        members = [ExecutionMessage.from_json(message.body) for message in runs]
        runtime.queue.send_body(batch_json(members))
        [batch] = list(runtime.queue.client.receive_messages(max_messages=1))

        ran = host.invoke("executor", *queue_data(batch))

        assert ran.result.status == SUCCESS, ran.result.exception.message
        assert len(target.wait_for_requests(2)) == 2
    for job in jobs:
        _, _, history = _http(host, "GET", job.replace("?", "/history?"))
        assert [h["properties"]["status"] for h in history["value"]] == ["Completed"]
