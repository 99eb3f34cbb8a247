"""`function_app.py` as the Functions host sees it: indexed triggers and bindings, and each
function invoked in-process with `azure.functions` objects against a real Azurite."""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from types import ModuleType

import azure.functions as func
import pytest
from azure.functions.queue import QueueMessage
from azure.functions.timer import TimerRequest

from devtools.azurite import Azurite
from scheduler_lib.config import Settings
from scheduler_lib.dispatch import ControlMessage

BASE = "http://localhost/api/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler"


def _import_function_app(
    settings: Settings, azurite: Azurite, monkeypatch: pytest.MonkeyPatch, **env: str
) -> ModuleType:
    """Import function_app.py with app settings pointing at this test's storage (and `env`)."""
    monkeypatch.setenv("AzureWebJobsStorage", azurite.connection_string)
    monkeypatch.setenv("SCHEDULER_API_KEYS", "fa-key")
    monkeypatch.setenv("SCHEDULER_STORAGE_PREFIX", settings.storage_prefix)
    monkeypatch.setenv("SCHEDULER_EXECUTION_QUEUE", settings.execution_queue_name)
    monkeypatch.setenv("SCHEDULER_DISPATCH_QUEUE", settings.dispatch_queue_name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    sys.modules.pop("function_app", None)
    module = importlib.import_module("function_app")
    # The host indexes the app once; get_functions() is not meant to be called twice.
    module.indexed = {f.get_function_name(): f for f in module.app.get_functions()}
    return module


@pytest.fixture
def function_app(
    settings: Settings, azurite: Azurite, monkeypatch: pytest.MonkeyPatch
) -> ModuleType:
    return _import_function_app(settings, azurite, monkeypatch)


class _Context(func.Context):
    """The slice of the invocation context the ASGI middleware reads."""

    invocation_id = "test-invocation"
    function_name = "http_app_func"
    function_directory = "."
    trace_context = None
    retry_context = None
    thread_local_storage = None


def _functions(module: ModuleType) -> dict[str, object]:
    return module.indexed


def test_functions_are_indexed_with_their_triggers(function_app: ModuleType) -> None:
    functions = _functions(function_app)
    assert set(functions) == {
        "http_app_func", "dispatcher", "dispatch_pair", "executor", "poisoned", "housekeeping",
        "notify",
    }  # fmt: skip
    triggers = {
        name: json.loads(function.get_function_json())["bindings"][0]
        for name, function in functions.items()
    }
    assert triggers["http_app_func"]["type"] == "httpTrigger"
    assert triggers["http_app_func"]["route"] == "/{*route}"
    assert triggers["http_app_func"]["authLevel"] == "ANONYMOUS"
    assert triggers["dispatcher"]["type"] == "timerTrigger"
    assert triggers["dispatcher"]["schedule"] == "0 * * * * *"
    assert triggers["housekeeping"]["type"] == "timerTrigger"
    assert triggers["housekeeping"]["schedule"] == "0 17 3 * * *"  # daily, 03:17 UTC
    assert triggers["dispatch_pair"]["type"] == "queueTrigger"
    assert triggers["dispatch_pair"]["queueName"] == "%SCHEDULER_DISPATCH_QUEUE%"
    assert triggers["dispatch_pair"]["connection"] == "AzureWebJobsStorage"
    assert triggers["executor"]["type"] == "queueTrigger"
    assert triggers["executor"]["queueName"] == "%SCHEDULER_EXECUTION_QUEUE%"
    assert triggers["executor"]["connection"] == "AzureWebJobsStorage"
    assert triggers["poisoned"]["type"] == "queueTrigger"
    assert triggers["poisoned"]["queueName"] == "%SCHEDULER_EXECUTION_QUEUE%-poison"
    # Notifications: their own queue beside the execution queue (no setting of its own).
    assert triggers["notify"]["type"] == "queueTrigger"
    assert triggers["notify"]["queueName"] == "%SCHEDULER_EXECUTION_QUEUE%-notify"


def _http(
    module: ModuleType, method: str, url: str, body: object | None = None
) -> func.HttpResponse:
    handler = _functions(module)["http_app_func"].get_user_function()
    request = func.HttpRequest(
        method,
        url,
        headers={"Authorization": "Bearer fa-key", "Content-Type": "application/json"},
        params={"api-version": "2016-03-01"},
        body=json.dumps(body).encode() if body is not None else b"",
    )
    return asyncio.run(handler(request, _Context()))


def test_http_function_serves_the_api(function_app: ModuleType) -> None:
    created = _http(
        function_app,
        "PUT",
        f"{BASE}/jobCollections/coll1?api-version=2016-03-01",
        {"location": "westeurope", "properties": {"sku": {"name": "Standard"}}},
    )
    assert created.status_code in (200, 201), created.get_body()
    got = _http(function_app, "GET", f"{BASE}/jobCollections/coll1?api-version=2016-03-01")
    assert got.status_code == 200
    assert json.loads(got.get_body())["name"] == "coll1"
    assert got.headers.get("ETag")


def test_timer_queue_and_housekeeping_functions_run(function_app: ModuleType) -> None:
    functions = _functions(function_app)
    functions["dispatcher"].get_user_function()(TimerRequest())
    # The timer only hands out pairs (no shard has a cursor yet and none has rows: one pair
    # of every shard); the dispatch function handles each.
    control = function_app.runtime.dispatch_queue
    pairs = control.receive(max_messages=32)
    [only] = [ControlMessage.from_json(pair.body) for pair in pairs]
    assert only.shards == tuple(range(function_app.settings.dispatch_shards))
    for pair in pairs:
        message = QueueMessage(id=pair.id, body=pair.body.encode(), dequeue_count=1)
        functions["dispatch_pair"].get_user_function()(message)
        control.delete(pair)
    assert function_app.runtime.drain_dispatch() == []
    functions["housekeeping"].get_user_function()(TimerRequest())
    # A malformed message must fail loudly so the host retries and finally poisons it.
    bad = QueueMessage(id="m1", body=b"not a message", dequeue_count=1)
    with pytest.raises(ValueError):
        functions["executor"].get_user_function()(bad)
    # The poison-queue function takes it then: nothing to record against, nothing raised.
    functions["poisoned"].get_user_function()(bad)


@pytest.fixture
def function_app_without_keys(
    settings: Settings, azurite: Azurite, monkeypatch: pytest.MonkeyPatch
) -> ModuleType:
    """function_app.py as App Service starts it when the Key Vault reference of the API keys
    did not resolve (the identity's role not yet propagated, Key Vault throttling): the
    setting then holds the reference text itself."""
    return _import_function_app(settings, azurite, monkeypatch, SCHEDULER_API_KEYS=REFERENCE)


REFERENCE = "@Microsoft.KeyVault(SecretUri=https://vault1.vault.azure.net/secrets/api-keys/)"


def test_unresolved_api_keys_close_the_api_but_not_the_scheduler(
    function_app_without_keys: ModuleType,
) -> None:
    module = function_app_without_keys
    functions = _functions(module)
    assert set(functions) == {
        "http_app_func", "dispatcher", "dispatch_pair", "executor", "poisoned", "housekeeping",
        "notify",
    }  # fmt: skip
    for url in (f"{BASE}/jobCollections/coll1", "http://localhost/api/health"):
        answer = _http(module, "GET", url)
        assert answer.status_code == 503, answer.get_body()
        assert int(answer.headers["Retry-After"]) > 0
        text = answer.get_body().decode()
        assert "SCHEDULER_API_KEYS" in text and "Key Vault" in text
        assert "vault1" not in text and "secrets/" not in text
    error = json.loads(_http(module, "GET", f"{BASE}/jobCollections/coll1").get_body())["error"]
    assert error["code"] == "ServiceUnavailable"
    health = json.loads(_http(module, "GET", "http://localhost/api/health").get_body())
    assert health["status"] == "Unhealthy"
    assert health["configuration"]["unresolved"] == ["SCHEDULER_API_KEYS"]
    # The reference text is never accepted as a key.
    assert module.settings.api_keys == ()
    # The timers and the queue trigger keep running.
    functions["dispatcher"].get_user_function()(TimerRequest())
    functions["housekeeping"].get_user_function()(TimerRequest())
    with pytest.raises(ValueError):
        functions["executor"].get_user_function()(
            QueueMessage(id="m1", body=b"not a message", dequeue_count=1)
        )


def test_the_app_configures_no_exporter_of_its_own(
    settings: Settings, azurite: Azurite, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In Azure the Python worker exports to App Insights itself
    (PYTHON_APPLICATIONINSIGHTS_ENABLE_TELEMETRY, see tests/test_infra.py): a second
    `configure_azure_monitor` in function_app.py would send every log record twice."""
    import logging

    loggers = [logging.getLogger(), logging.getLogger("scheduler")]
    before = {id(h) for logger in loggers for h in logger.handlers}
    _import_function_app(
        settings,
        azurite,
        monkeypatch,
        APPLICATIONINSIGHTS_CONNECTION_STRING="InstrumentationKey=00000000-0000-0000-0000-"
        "000000000000;IngestionEndpoint=http://127.0.0.1:9/",
    )
    added = [h for logger in loggers for h in logger.handlers if id(h) not in before]
    assert [type(h).__module__ for h in added if "opentelemetry" in type(h).__module__] == []
