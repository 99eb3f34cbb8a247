"""The Functions host's side of Azure's Python worker, in this process, for tests.

Azure runs `function_app.py` in a worker process the Functions host talks to over gRPC. For
Python 3.13+ that worker is a thin proxy around `azure_functions_runtime` (PyPI:
`azure-functions-runtime`), whose handlers take the host's requests and return its responses:
`worker_init_request` imports the app and indexes it (the runtime's own `index_function_app`,
`Registry.add_indexed_function` with its parameter and annotation checks, and
`get_fx_raw_bindings`), `functions_metadata_request` returns what it indexed,
`invocation_request` converts the host's `TypedData` into `func.HttpRequest`,
`func.TimerRequest`, `func.QueueMessage` with the runtime's binding registry and calls the
function. `FunctionsHost` calls those handlers as the proxy does (no gRPC: the proxy only
relays), with the messages of `tests.worker.rpc`.

What the host itself checks before it runs anything is C# in the host, so it is written out
here, each rule as the host states it (see `HOST_RULES`): binding and function names, the
`%SETTING%` names it resolves from app settings, the connection setting, queue names and
timer schedules. Everything else is the worker's own code.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import azure_functions_runtime as worker
from azure.storage.queue import QueueMessage as StorageQueueMessage
from azure_functions_runtime import handle_event
from azure_functions_runtime.functions import Registry

from tests.worker.rpc import protos

#: The host's rules on what the worker returns (WebJobs Script's binding and function name
#: validation, its name resolver, the Storage and Timer extensions' attribute checks).
HOST_RULES = {
    "binding name": re.compile(r"^([a-zA-Z][a-zA-Z0-9]{0,127}|\$return)$"),
    "function name": re.compile(r"^(?!host$)[a-z][a-z0-9_\-]{0,127}$", re.IGNORECASE),
    "queue name": re.compile(r"^(?=.{3,63}$)[a-z0-9](?!.*--)[a-z0-9-]*[a-z0-9]$"),
    "schedule": re.compile(r"^(\S+\s+){5}\S+$|^\d+(\.\d+)?:\d\d:\d\d$"),
}
_SETTING = re.compile(r"%([^%]+)%")
SUCCESS = protos.StatusResult.Success


class HostError(Exception):
    """The app does not start on the host: the worker's init failed, or the host refused
    what the worker indexed. The message is what the host would log."""


@dataclass
class WorkerRequest:
    """How the proxy worker hands a host request to the runtime (`request.request` is the
    `StreamingMessage`; `properties` carries the protobuf module and the host address)."""

    name: str
    request: Any
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class IndexedFunction:
    """One function as the host sees it after indexing: the metadata the worker returned,
    and its bindings as the host reads them (`%SETTING%` names resolved)."""

    metadata: Any  # RpcFunctionMetadata
    bindings: dict[str, dict[str, Any]]

    @property
    def trigger(self) -> dict[str, Any]:
        [trigger] = [b for b in self.bindings.values() if b["type"].endswith("Trigger")]
        return trigger


class FunctionsHost:
    """Start the worker on `app_dir` with `app_settings` as its environment (as the host
    starts the worker process), then invoke functions through it."""

    def __init__(self, app_dir: Path, app_settings: Mapping[str, str]) -> None:
        self.app_dir = app_dir
        self.app_settings = dict(app_settings)
        self.loop = asyncio.new_event_loop()
        self.functions: dict[str, IndexedFunction] = {}

    def _request(self, name: str, **content: Any) -> WorkerRequest:
        message = protos.StreamingMessage(request_id=uuid.uuid4().hex, **content)
        return WorkerRequest(name, message, {"protos": protos, "host": "127.0.0.1"})

    def start(self) -> dict[str, IndexedFunction]:
        """Init (the worker imports and indexes the app), metadata, the host's checks, then
        one load request per function. Raises HostError as the host would fail."""
        handle_event._functions = Registry()  # a new worker process starts with none
        worker.start_threadpool_executor()
        directory = str(self.app_dir)
        init = self.loop.run_until_complete(
            handle_event.worker_init_request(
                self._request(
                    "WorkerInitRequest",
                    worker_init_request=protos.WorkerInitRequest(
                        host_version="4.1040.0", function_app_directory=directory
                    ),
                )
            )
        )
        _raise_on_failure("worker init", init.result)
        response = self.loop.run_until_complete(
            handle_event.functions_metadata_request(
                self._request(
                    "FunctionsMetadataRequest",
                    functions_metadata_request=protos.FunctionsMetadataRequest(
                        function_app_directory=directory
                    ),
                )
            )
        )
        _raise_on_failure("function metadata", response.result)
        assert not response.use_default_metadata_indexing  # the worker indexed the app
        problems: list[str] = []
        for metadata in response.function_metadata_results:
            bindings = self._read_bindings(metadata, problems)
            self.functions[metadata.name] = IndexedFunction(metadata, bindings)
        if problems:
            raise HostError("\n".join(problems))
        for function in self.functions.values():
            load = self.loop.run_until_complete(
                handle_event.function_load_request(
                    self._request(
                        "FunctionLoadRequest",
                        function_load_request=protos.FunctionLoadRequest(
                            function_id=function.metadata.function_id, metadata=function.metadata
                        ),
                    )
                )
            )
            _raise_on_failure(f"loading {function.metadata.name}", load.result)
        return self.functions

    def _read_bindings(self, metadata: Any, problems: list[str]) -> dict[str, dict[str, Any]]:
        """The host's reading of one function's raw bindings, with its checks."""
        name = metadata.name
        if not HOST_RULES["function name"].match(name):
            problems.append(f"'{name}' is not a valid function name.")
        bindings: dict[str, dict[str, Any]] = {}
        for raw in metadata.raw_bindings:
            binding = {k: self._resolve(name, v, problems) for k, v in json.loads(raw).items()}
            binding_name = binding.get("name") or ""
            if not HOST_RULES["binding name"].match(binding_name):
                problems.append(
                    f"{name}: The binding name {binding_name} is invalid. "
                    "Please assign a valid name to the binding."
                )
            if binding_name in bindings:
                problems.append(f"{name}: Multiple bindings with name '{binding_name}'.")
            bindings[binding_name] = binding
            self._check_trigger(name, binding, problems)
        if sum(b["type"].endswith("Trigger") for b in bindings.values()) != 1:
            problems.append(f"{name}: a function must have exactly one trigger binding.")
        return bindings

    def _resolve(self, function: str, value: Any, problems: list[str]) -> Any:
        """`%NAME%` in a binding property, from app settings (the host's name resolver)."""
        if not isinstance(value, str):
            return value

        def setting(match: re.Match[str]) -> str:
            resolved = self.app_settings.get(match.group(1))
            if resolved is None:
                problems.append(
                    f"Error indexing method 'Functions.{function}': "
                    f"'{match.group(0)}' does not resolve to a value."
                )
                return match.group(0)
            return resolved

        return _SETTING.sub(setting, value)

    def _check_trigger(self, function: str, binding: dict[str, Any], problems: list[str]) -> None:
        kind = binding["type"]
        if kind == "queueTrigger":
            queue = binding.get("queueName", "")
            if "%" not in queue and not HOST_RULES["queue name"].match(queue):
                problems.append(f"{function}: Invalid queue name: {queue}")
            connection = binding.get("connection") or "AzureWebJobsStorage"
            settings = self.app_settings
            if not any(k == connection or k.startswith(connection + "__") for k in settings):
                problems.append(
                    f"{function}: Storage account connection string '{connection}' does not exist."
                )
        if kind == "timerTrigger" and not HOST_RULES["schedule"].match(binding.get("schedule", "")):
            problems.append(
                f"{function}: The schedule expression '{binding.get('schedule')}' was not "
                "recognized as a valid cron expression or timespan string."
            )

    def invoke(
        self,
        function: str,
        data: Any,
        trigger_metadata: Mapping[str, Any] | None = None,
    ) -> Any:
        """One InvocationRequest: `data` (TypedData) bound to the function's trigger."""
        indexed = self.functions[function]
        request = protos.InvocationRequest(
            invocation_id=uuid.uuid4().hex,
            function_id=indexed.metadata.function_id,
            input_data=[protos.ParameterBinding(name=indexed.trigger["name"], data=data)],
            trigger_metadata=dict(trigger_metadata or {}),
        )
        return self.loop.run_until_complete(
            handle_event.invocation_request(
                self._request("InvocationRequest", invocation_request=request)
            )
        )

    def close(self) -> None:
        worker.stop_threadpool_executor()
        self.loop.close()


def _raise_on_failure(step: str, result: Any) -> None:
    if result.status != SUCCESS:
        raise HostError(f"{step} failed: {result.exception.message}")


@contextmanager
def running_host(app_dir: Path, app_settings: Mapping[str, str]) -> Iterator[FunctionsHost]:
    """A started host on `app_dir`: the app settings are the worker's environment, and the
    app directory comes first on its path, as in the worker process. The app's module is
    imported afresh and forgotten afterwards, so each host indexes its own copy."""
    saved = {name: os.environ.get(name) for name in app_settings}
    os.environ.update(app_settings)
    sys.path.insert(0, str(app_dir))
    sys.modules.pop("function_app", None)
    host = FunctionsHost(app_dir, {**os.environ, **app_settings})
    try:
        host.start()
        yield host
    finally:
        # An AsgiFunctionApp that served a request shuts its ASGI app down when collected,
        # with asyncio.run; shut it down here, on the loop its lifespan task runs on.
        app = getattr(sys.modules.pop("function_app", None), "app", None)
        if getattr(app, "startup_task_done", False):
            host.loop.run_until_complete(app.middleware.notify_shutdown())
            app.startup_task_done = False
        host.close()
        sys.path.remove(str(app_dir))
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def http_data(method: str, url: str, *, headers: Mapping[str, str], body: bytes = b"") -> Any:
    """An HTTP trigger's input as the host sends it (body as raw bytes: RawHttpBodyBytes)."""
    query = dict(part.split("=", 1) for part in url.partition("?")[2].split("&") if "=" in part)
    return protos.TypedData(
        http=protos.RpcHttp(
            method=method,
            url=url,
            headers=dict(headers),
            query=query,
            body=protos.TypedData(bytes=body),
        )
    )


def timer_data(*, last: datetime, next_: datetime, past_due: bool = False) -> Any:
    """A timer trigger's input: the host's TimerInfo as JSON (with use_monitor's status)."""
    status = {"Last": last.isoformat(), "Next": next_.isoformat(), "LastUpdated": last.isoformat()}
    info = {"Schedule": {"AdjustForDST": True}, "ScheduleStatus": status, "IsPastDue": past_due}
    return protos.TypedData(json=json.dumps(info))


def message_text(message: StorageQueueMessage) -> str:
    """A message received from real storage, as text (the queue client may hand back bytes)."""
    content = message.content
    return bytes(content).decode() if isinstance(content, bytes) else str(content)


def queue_data(message: StorageQueueMessage) -> tuple[Any, dict[str, Any]]:
    """A queue trigger's input from a message received from real storage: its text, and the
    trigger metadata the Storage extension sends with it (counts and times as JSON)."""
    text = message_text(message)

    def when(value: datetime | None) -> Any:
        return protos.TypedData(json=json.dumps(value.isoformat() if value else None))

    metadata = {
        "QueueTrigger": protos.TypedData(string=text),
        "Id": protos.TypedData(string=message.id),
        "DequeueCount": protos.TypedData(json=str(message.dequeue_count)),
        "InsertionTime": when(message.inserted_on),
        "ExpirationTime": when(message.expires_on),
        "NextVisibleTime": when(message.next_visible_on),
        "PopReceipt": protos.TypedData(string=message.pop_receipt or ""),
    }
    return protos.TypedData(string=text), metadata
