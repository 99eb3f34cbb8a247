"""Extension 5 (2026-12-01): occurrence context in an action's texts.

`@{scheduledTime}`, `@{executionTag}`, `@{attempt}`, `@{jobId}` and `@{occurrence}` in an
HTTP body, a header value, or a Storage queue / Service Bus message are replaced, at each
attempt, by what the `x-ms-*` headers say about it, so a target that reads only its body
(a queue consumer, a webhook with a fixed schema) can de-duplicate and log too.

`@@{` is a literal `@{` (the only escape; a lone `@` needs none). Substitution is the job's
choice, stored with it: `placeholders` (a job property of 2026-12-01) is `true` unless the
request sets it to `false`, so a job stored by 2016-03-01 (which never has it) is sent exactly
as written, whatever `@{...}` its body holds. Where it is on, an unknown name or an
unterminated `@{` is a 400 at PUT naming the field, not a surprise at run time.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from scheduler_lib.domain.actions import ENVELOPE
from scheduler_lib.domain.definition import DEFAULT_PLACEHOLDERS, PLACEHOLDERS
from scheduler_lib.errors import ValidationError
from scheduler_lib.wire import readers
from scheduler_lib.wire.shapes import JSONObject
from scheduler_lib.wire.versions import ExtensionProperty, Location

NAMES = ("scheduledTime", "executionTag", "attempt", "jobId", "occurrence")
#: `@@{` (escape), `@{name}` (a placeholder), `@{` without its `}` (an error at PUT).
_TOKEN = re.compile(r"@@\{|@\{([^{}]*)\}|@\{")
#: The texts of an action placeholders apply to: (object key, text key).
_MESSAGES = (
    ("queueMessage", "message"),
    ("serviceBusQueueMessage", "message"),
    ("serviceBusTopicMessage", "message"),
)

SCHEMA: JSONObject = {
    "type": "boolean",
    "default": True,
    "description": "Replace @{scheduledTime}, @{executionTag}, @{attempt}, @{jobId} and "
    "@{occurrence} in request bodies, header values and queue/Service Bus messages at each "
    "attempt (@@{ is a literal @{). On unless false.",
}


#: `queueMessage.envelope` (same extension): the message goes inside Azure Scheduler's XML
#: `StorageQueueMessage` envelope with the occurrence's identifiers (`actions.storage_queue`).
ENVELOPE_SCHEMA: JSONObject = {
    "type": "boolean",
    "description": "Send the message inside Azure Scheduler's StorageQueueMessage XML "
    "envelope (ExecutionTag, ClientRequestId, ExpectedExecutionTime, SchedulerJobId, "
    "SchedulerJobCollectionId, Message), as the x-ms-* headers of HTTP actions.",
}


def validate(value: Any, path: str) -> bool:
    return readers.boolean(value, path)


def check(definition: JSONObject, value: Any, path: str) -> None:
    """With placeholders on, every `@{...}` in the action's texts names a known value."""
    if not value:
        return
    base = path.rsplit(".", 1)[0] if "." in path else ""
    for action, where in _actions(definition, readers.join(base, "action")):
        for text, field in _texts(action, where):
            _check_text(text, field)


def substitute(text: str, values: Mapping[str, str]) -> str:
    """`text` with each known `@{name}` replaced and `@@{` turned into `@{` (an unknown name
    is left as written: PUT refused it, so only a definition stored otherwise has one)."""

    def one(match: re.Match[str]) -> str:
        if match.group(0) == "@@{":
            return "@{"
        name = match.group(1)
        return values[name] if name in values else match.group(0)

    return _TOKEN.sub(one, text)


def apply(action: Mapping[str, Any], values: Mapping[str, str]) -> JSONObject:
    """A copy of one action (main or error) with its texts substituted."""
    result = dict(action)
    request = action.get("request")
    if isinstance(request, Mapping):
        request = dict(request)
        if isinstance(request.get("body"), str):
            request["body"] = substitute(request["body"], values)
        if isinstance(request.get("headers"), Mapping):
            request["headers"] = {
                name: substitute(text, values) if isinstance(text, str) else text
                for name, text in request["headers"].items()
            }
        result["request"] = request
    for key, text_key in _MESSAGES:
        message = action.get(key)
        if isinstance(message, Mapping) and isinstance(message.get(text_key), str):
            result[key] = {**message, text_key: substitute(message[text_key], values)}
    return result


def _check_text(text: str, field: str) -> None:
    for match in _TOKEN.finditer(text):
        if match.group(0) == "@@{":
            continue
        name = match.group(1)
        escape = "write @@{ for a literal @{"
        if name is None:
            raise ValidationError(field, f"has an '@{{' without its closing '}}' ({escape})")
        if name not in NAMES:
            known = ", ".join(f"@{{{known}}}" for known in NAMES)
            raise ValidationError(
                field, f"has an unknown placeholder '@{{{name}}}': known are {known} ({escape})"
            )


def _actions(definition: JSONObject, path: str) -> Iterator[tuple[JSONObject, str]]:
    action = definition.get("action")
    if isinstance(action, dict):
        yield action, path
        error = action.get("errorAction")
        if isinstance(error, dict):
            yield error, readers.join(path, "errorAction")


def _texts(action: JSONObject, path: str) -> Iterator[tuple[str, str]]:
    request = action.get("request")
    if isinstance(request, dict):
        where = readers.join(path, "request")
        body = request.get("body")
        if isinstance(body, str):
            yield body, readers.join(where, "body")
        headers = request.get("headers")
        for name, text in (headers if isinstance(headers, dict) else {}).items():
            if isinstance(text, str):
                yield text, readers.join(readers.join(where, "headers"), name)
    for key, text_key in _MESSAGES:
        message = action.get(key)
        text = message.get(text_key) if isinstance(message, dict) else None
        if isinstance(text, str):
            yield text, readers.join(readers.join(path, key), text_key)


#: Their entries in the catalog (`extension_catalog`).
ENTRIES = (
    ExtensionProperty(
        Location.JOB,
        PLACEHOLDERS,
        validate,
        SCHEMA,
        cross_check=check,
        default=DEFAULT_PLACEHOLDERS,
    ),
    ExtensionProperty(Location.QUEUE_MESSAGE, ENVELOPE, validate, ENVELOPE_SCHEMA),
)
