"""How the client wrote a job, beside what it meant: what 2016-03-01 answers echo.

The stored definition is canonical (what the client meant: ISO 8601 durations, a main
action's default retry policy filled in), because the dispatcher, the executor and every
check read one spelling, and a job stored before this module existed is of that form.
Azure Scheduler answered some things as they were sent, so a job also keeps, in
`JobRecord.original_form` (its own entity column, absent when empty):

- `durations`: the .NET TimeSpan texts (`00:01:00`, what the .NET SDK 2.x sends) of the
  durations a 2016-03-01 answer shows, by their path in the definition
  (`action.retryPolicy.retryInterval`, `...brokeredMessageProperties.timeToLive`);
- `defaulted`: the objects filled in with defaults because the client left them out
  (`action.retryPolicy`): the defaults apply, but Azure Scheduler's answer did not show them.

`of(properties, definition)` reads it off a validated request; `restore(definition, form)`
gives the definition back as written: the 2016-03-01 answer, and the base a PATCH merges
onto (so what a patch leaves alone keeps its spelling, whatever the patch's version). Each
entry applies only while the stored value still is what it stood for, so a definition
changed by other means (the dashboard's editor saves the canonical form) shows its own.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from scheduler_lib.wire import readers
from scheduler_lib.wire.actions import DEFAULT_RETRY
from scheduler_lib.wire.durations import read_timespan
from scheduler_lib.wire.shapes import JSONObject, as_list, as_object, json_object

DURATIONS = "durations"
DEFAULTED = "defaulted"
_RETRY_POLICY = "action.retryPolicy"
_SERVICE_BUS = ("serviceBusQueueMessage", "serviceBusTopicMessage")


def of(properties: JSONObject, definition: JSONObject) -> JSONObject:
    """The original form of a request's job `properties` (already validated, so every
    value read here is of a known shape) once normalized into `definition`."""
    durations: dict[str, str] = {}
    for path, raw in _durations(_get(properties, "action"), "action"):
        spelled = isinstance(raw, str) and read_timespan(raw, path) is not None
        if spelled and _at(definition, path) is not None:
            durations[path] = raw
    form: JSONObject = {}
    if durations:
        form[DURATIONS] = json_object(durations)
    action = _get(properties, "action")
    if _retry_policy(action) is None and _at(definition, _RETRY_POLICY) is not None:
        form[DEFAULTED] = [_RETRY_POLICY]
    return form


def restore(definition: JSONObject, form: JSONObject) -> JSONObject:
    """A copy of `definition` as the client wrote it (see the module docstring)."""
    if not form:
        return definition
    result = copy.deepcopy(definition)
    for path, text in as_object(form.get(DURATIONS)).items():
        parent, key = _parent(result, path)
        if (
            parent is not None
            and isinstance(text, str)
            and parent.get(key) == _canonical(text, path)
        ):
            parent[key] = text
    for defaulted in as_list(form.get(DEFAULTED)):
        if not isinstance(defaulted, str):
            continue
        parent, key = _parent(result, defaulted)
        if parent is not None and parent.get(key) == DEFAULT_RETRY:
            del parent[key]
    return result


def _durations(action: Any, path: str) -> Iterator[tuple[str, Any]]:
    """(definition path, value as sent) of each duration of an action a 2016-03-01 answer
    shows, and of its errorAction's."""
    if not isinstance(action, dict):
        return
    policy = _retry_policy(action)
    yield f"{path}.retryPolicy.retryInterval", _get(policy, "retryInterval")
    for name in _SERVICE_BUS:
        brokered = _get(_get(action, name), "brokeredMessageProperties")
        yield f"{path}.{name}.brokeredMessageProperties.timeToLive", _get(brokered, "timeToLive")
    yield from _durations(_get(action, "errorAction"), f"{path}.errorAction")


def _retry_policy(action: Any) -> Any:
    """An action's retryPolicy as sent: beside `request`, or inside it as the documentation's
    example has it (`actions.normalize_action` reads both)."""
    outer = _get(action, "retryPolicy")  # a null is left out; `{}` is a policy of defaults
    return outer if outer is not None else _get(_get(action, "request"), "retryPolicy")


def _get(node: Any, key: str) -> Any:
    """`node[key]` with the key matched case-insensitively, as the validation matched it."""
    if not isinstance(node, dict):
        return None
    return next((value for name, value in node.items() if name.lower() == key.lower()), None)


def _at(node: Any, path: str) -> Any:
    for key in path.split("."):
        node = node.get(key) if isinstance(node, dict) else None
    return node


def _parent(node: JSONObject, path: str) -> tuple[JSONObject | None, str]:
    *parents, key = path.split(".")
    found = _at(node, ".".join(parents))
    return (found if isinstance(found, dict) else None), key


def _canonical(text: str, path: str) -> str:
    return readers.duration(text, path)
