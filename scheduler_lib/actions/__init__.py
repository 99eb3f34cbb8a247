"""One attempt of a job's action: the interface the executor codes against, and dispatch.

`run_action` performs exactly one attempt of the action object it is given (the main action or
the errorAction); retries and the errorAction are the caller's business, so that every attempt
shows up in the job history like it did in Azure Scheduler.

A failing *target* never raises: refused connections, timeouts, non-2xx answers, rejected SAS
tokens or an unreadable pfx all become `ActionOutcome(succeeded=False, message=...)`, because
the caller's answer to each of them is the same (record it, retry per the retry policy).
Neither does an unexpected exception of this code's own: it becomes a failed outcome too.
Every outcome message passes through a `Redactor` built from the action's secrets, so a target
that echoes our credentials back cannot put them into the history.

Executor modules are imported on first use: each is the only importer of its SDK, and an HTTP
job should not pay for importing the Service Bus SDK.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from scheduler_lib.actions.redaction import Redactor
from scheduler_lib.config import Settings
from scheduler_lib.errors import ValidationError
from scheduler_lib.wire import attempt_timeout, placeholders

log = logging.getLogger("scheduler.actions")

__all__ = [
    "ACTION_TIMEOUT_SECONDS",
    "ADAPTERS",
    "BODY_LIMIT",
    "ActionOutcome",
    "ExecutionContext",
    "require",
    "run_action",
]

#: How much of a target's answer (response body) the history keeps, as Azure Scheduler did.
BODY_LIMIT = 2048

#: How long one attempt may wait for its target. Azure Scheduler raised its HTTP timeout from
#: 30 to 60 seconds in October 2016; the same bound applies to queue and Service Bus sends.
#: An HTTP action of api-version 2026-12-01 may set its own (`model.attempt_timeout`).
ACTION_TIMEOUT_SECONDS = attempt_timeout.DEFAULT_TIMEOUT.total_seconds()

#: Adapters `run_action` accepts, each passed only to the executors that take it:
#: `timeout` (seconds, all executors), `verify` (True or a CA bundle path, HTTP),
#: `token_cache` (an `oauth.TokenCache`, HTTP), `sender_factory` (Service Bus).
ADAPTERS = frozenset({"timeout", "verify", "token_cache", "sender_factory"})

#: action type -> (executor module, the name history messages start with, as Azure's did)
_EXECUTORS = {
    "Http": ("http", "Http"),
    "Https": ("http", "Http"),
    "StorageQueue": ("storage_queue", "StorageQueue"),
    "ServiceBusQueue": ("service_bus", "ServiceBusQueue"),
    "ServiceBusTopic": ("service_bus", "ServiceBusTopic"),
}


@dataclass(frozen=True)
class ExecutionContext:
    """Which occurrence of which job an attempt belongs to (sent to HTTP targets as headers)."""

    job_id: str
    job_collection_id: str
    expected_execution_time: datetime
    execution_tag: str
    retry_count: int = 0
    #: 1-based number of a scheduled occurrence; 0 for a manual run.
    occurrence_number: int = 0
    #: Whether the job substitutes `@{...}` placeholders (`model.placeholders`).
    placeholders: bool = False
    #: The job collection's active signing secrets (`actions.signing`); never shown.
    signing_secrets: tuple[str, ...] = field(default=(), repr=False)
    #: When the attempt is sent (the executor's clock): the signature's timestamp.
    sent_at: datetime | None = None
    #: The action of the occurrence this attempt belongs to (MainAction or ErrorAction).
    action_name: str = "MainAction"

    def __post_init__(self) -> None:
        if self.expected_execution_time.utcoffset() is None:
            raise ValueError("expected_execution_time must be timezone-aware")

    def identifiers(self) -> dict[str, str]:
        """What Azure Scheduler told targets about the call (as HTTP headers; Service Bus
        messages carry them as application properties), so they can de-duplicate retries
        and at-least-once repeats (same execution tag)."""
        return {
            "x-ms-scheduler-jobid": self.job_id,
            "x-ms-scheduler-jobcollectionid": self.job_collection_id,
            "x-ms-scheduler-expected-execution-time": self.expected_execution_time_iso,
            "x-ms-execution-tag": self.execution_tag,
        }

    @property
    def webhook_id(self) -> str:
        """One id per action of an occurrence, the same across its retries."""
        suffix = "" if self.action_name == "MainAction" else f"-{self.action_name}"
        return f"msg_{self.execution_tag}{suffix}"

    def placeholder_values(self) -> dict[str, str]:
        """The values of `@{...}` placeholders; `attempt` is 1 for the first try."""
        return {
            "scheduledTime": self.expected_execution_time_iso,
            "executionTag": self.execution_tag,
            "attempt": str(self.retry_count + 1),
            "jobId": self.job_id,
            "occurrence": str(self.occurrence_number),
        }

    @property
    def expected_execution_time_iso(self) -> str:
        """The occurrence as ISO 8601 UTC with a `Z`, the form Azure Scheduler sent."""
        text = self.expected_execution_time.astimezone(UTC).isoformat()
        return text.removesuffix("+00:00") + "Z"


@dataclass(frozen=True)
class ActionOutcome:
    """The result of one attempt. `message` goes into the job history, so it never holds a
    secret; `status_code` is the target's status when it answered at all."""

    succeeded: bool
    message: str
    status_code: int | None = None
    #: The target's `Retry-After` header, as sent (an Exponential retry policy honours it).
    retry_after: str | None = None


def require(obj: Mapping[str, Any], key: str, path: str) -> Any:
    """`obj[key]`, or a ValidationError naming `path.key` when it is missing or empty.

    Actions arrive validated; this turns a stored action that is not (an older definition, a
    bug upstream) into a history entry that says which field is wrong instead of a KeyError.
    """
    value = obj.get(key) if isinstance(obj, Mapping) else None
    if value is None or value == "":
        raise ValidationError(f"{path}.{key}", "is required")
    return value


@functools.cache
def _executor(action_type: str) -> tuple[Callable[..., ActionOutcome], frozenset[str]]:
    """The executor of `action_type` and the names of its parameters, imported and inspected
    once per process (the first attempt of that type), not on every attempt: an import
    lookup and a signature cost as much CPU as a quarter of the HTTP request itself."""
    execute = importlib.import_module(f"{__name__}.{_EXECUTORS[action_type][0]}").execute
    return execute, frozenset(inspect.signature(execute).parameters)


def run_action(
    action: Mapping[str, Any], context: ExecutionContext, settings: Settings, **adapters: Any
) -> ActionOutcome:
    """Perform one attempt of `action` and say how it went; see the module docstring."""
    unknown = set(adapters) - ADAPTERS
    if unknown:
        raise TypeError(f"unknown adapters: {sorted(unknown)}; known: {sorted(ADAPTERS)}")
    redactor = Redactor.from_action(action)
    if context.placeholders:
        action = placeholders.apply(action, context.placeholder_values())
    action_type = action.get("type")
    if action_type not in _EXECUTORS:
        return ActionOutcome(False, f"action.type: unsupported action type {action_type!r}")
    label = _EXECUTORS[action_type][1]
    execute, accepted = _executor(action_type)
    offered = {**adapters, "redactor": redactor}  # executors that add derived secrets take it
    kwargs = {name: value for name, value in offered.items() if name in accepted}
    try:
        outcome: ActionOutcome = execute(action, context, settings, **kwargs)
    except ValidationError as exc:
        outcome = ActionOutcome(False, f"{label} Action - {exc.message}")
    except Exception as exc:
        # Anything else is a bug or a stored definition this code cannot send (a header
        # value that is not Latin-1, written before the API checked it). Raising would make
        # the host redeliver the message until it is poisoned, with nothing in the history
        # and no errorAction; as a failed attempt it follows the retry policy like any other.
        log.warning("action raised %s", type(exc).__name__, extra={"tag": context.execution_tag})
        outcome = ActionOutcome(False, f"{label} Action - unexpected {type(exc).__name__}: {exc}")
    return replace(outcome, message=redactor(outcome.message))
