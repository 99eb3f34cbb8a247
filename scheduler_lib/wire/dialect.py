"""How each api-version writes its answers: the one place that decides how the wire looks.

A job or collection is stored once, as the client meant it (PascalCase enums, ISO 8601
durations, defaults filled in, plus `original_form`); what an answer looks like depends on
the api-version asked, and is decided by one `Dialect` per version, here alone. Input is
the same for both: case-insensitive enums, either duration form, either key spelling.

**2016-03-01 answers as Azure Scheduler did** (its recorded sessions show it): job enums as
its serializer wrote them, camelCased (`enabled`, `week`, `monday`, `fixed`,
`netMessaging`, `amqp`, `sharedAccessKey`), and so a quota's `maxRecurrence.frequency`,
while an action's `type`, an HTTP authentication's `type` and a collection's `state` kept
their PascalCase; durations as sent (a TimeSpan stays `00:01:00`); what nobody set left
out (no `tags: {}`, no default `retryPolicy`, no `status` for a Disabled job that never
ran) but `recurrence.interval: 1` filled in; `monthlyOccurrences[].occurrence` lower-case
(with `Occurrence` beside it: the Python SDK reads only that spelling, and without it a
GET-modify-PUT would drop the occurrence); a client certificate's expiry as
`certificateExpiration` (and as the spec's `certificateExpirationDate`, which the SDKs
read); `"nextLink": null` on a list's last page; 201 for a PUT that replaces a collection.

**2026-12-01 answers the canonical form**: the spec's PascalCase enums (what the SDKs'
enum constants equal), ISO 8601 durations (the spec's `format: duration`, which every
SDK's duration type parses: the Python SDK cannot read a TimeSpan), the effective
definition (the default retry policy, `status` and `tags: {}` always shown,
`recurrence.interval` filled in), the spec's key spellings, no `nextLink` on a last page,
and 200 for a replaced collection (201 only for a created one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scheduler_lib.domain import JobRecord, JobState
from scheduler_lib.wire import original_form
from scheduler_lib.wire.shapes import Item, JSONObject, ListPage, as_object
from scheduler_lib.wire.versions import ApiVersion

_SERVICE_BUS = ("serviceBusQueueMessage", "serviceBusTopicMessage")


@dataclass(frozen=True)
class Dialect:
    """How one api-version writes its answers (see the module docstring)."""

    #: Job enums (and a quota's frequency) camelCased, as Azure Scheduler's service wrote
    #: them; False: the canonical PascalCase.
    camel_case_enums: bool
    #: Durations as sent, and what nobody set left out (see `original_form`).
    as_sent: bool
    #: The keys a monthly occurrence's number is written under.
    occurrence_keys: tuple[str, ...]
    #: The keys a client certificate's expiry is written under.
    certificate_expiry_keys: tuple[str, ...]
    #: `"nextLink": null` on a list's last page (False: no nextLink).
    null_next_link: bool
    #: The status of a PUT that replaces an existing collection.
    collection_replaced_status: int


DIALECTS = {
    ApiVersion.V2016_03_01: Dialect(
        camel_case_enums=True,
        as_sent=True,
        occurrence_keys=("occurrence", "Occurrence"),
        certificate_expiry_keys=("certificateExpiration", "certificateExpirationDate"),
        null_next_link=True,
        collection_replaced_status=201,
    ),
    ApiVersion.V2026_12_01: Dialect(
        camel_case_enums=False,
        as_sent=False,
        occurrence_keys=("Occurrence",),
        certificate_expiry_keys=("certificateExpirationDate",),
        null_next_link=False,
        collection_replaced_status=200,
    ),
}


def of(version: ApiVersion) -> Dialect:
    return DIALECTS[version]


def job_properties(definition: JSONObject, record: JobRecord, version: ApiVersion) -> JSONObject:
    """A job's wire `properties` (without `status`) from its redacted definition in the
    form `version` knows (`extensions.older_form`), and its state."""
    style = of(version)
    properties = (
        original_form.restore(definition, record.original_form)
        if style.as_sent
        else (dict(definition))
    )
    recurrence = properties.get("recurrence")
    if isinstance(recurrence, dict):
        properties["recurrence"] = _recurrence(recurrence, style)
    action = properties.get("action")
    if isinstance(action, dict):
        properties["action"] = _action(action, style)
    properties["state"] = _enum(record.state, style)
    return properties


def shows_status(record: JobRecord, version: ApiVersion) -> bool:
    """Whether the answer has a `status`: 2016-03-01 had none for a Disabled job that
    never ran (a job created Disabled), a status being what the service recorded."""
    if not of(version).as_sent or record.state != JobState.DISABLED:
        return True
    counts = (record.execution_count, record.failure_count, record.faulted_count)
    return record.last_execution_time is not None or any(counts)


def collection_body(body: JSONObject, version: ApiVersion) -> JSONObject:
    """A JobCollectionDefinition as `version` writes it (from its canonical form)."""
    style = of(version)
    result = dict(body)
    if style.as_sent and not result.get("tags"):
        result.pop("tags", None)
    properties = as_object(result.get("properties"))
    quota = as_object(properties.get("quota"))
    max_recurrence = quota.get("maxRecurrence")
    if style.camel_case_enums and isinstance(max_recurrence, dict):
        recurrence = {**max_recurrence}
        recurrence["frequency"] = _enum(recurrence.get("frequency"), style)
        result["properties"] = {
            **properties,
            "quota": {**quota, "maxRecurrence": recurrence},
        }
    return result


def list_body(items: list[Item], next_link: str | None, version: ApiVersion) -> ListPage[Item]:
    """A page of a list: its items and, when more follow, the nextLink."""
    body: ListPage[Item] = {"value": items}
    if next_link or of(version).null_next_link:
        body["nextLink"] = next_link
    return body


def camel_case(value: str) -> str:
    """`value` as Json.NET's camelCase names it (`Enabled` -> `enabled`, `NetMessaging` ->
    `netMessaging`, `AMQP` -> `amqp`): the leading run of capitals lower-cased, but for the
    last of the run when a lower-case letter follows it."""
    chars = list(value)
    for index, char in enumerate(chars):
        if not char.isupper():
            break
        if index > 0 and index + 1 < len(chars) and not chars[index + 1].isupper():
            break
        chars[index] = char.lower()
    return "".join(chars)


def _enum(value: Any, style: Dialect) -> Any:
    return camel_case(value) if style.camel_case_enums and isinstance(value, str) else value


def _recurrence(recurrence: JSONObject, style: Dialect) -> JSONObject:
    """`recurrence` with its frequency spelled, the interval filled in (Azure Scheduler's
    default, 1, which both versions show) and the schedule's enums and keys spelled."""
    result = dict(recurrence)
    if "frequency" in result:
        result["frequency"] = _enum(result["frequency"], style)
    result.setdefault("interval", 1)
    schedule = result.get("schedule")
    if isinstance(schedule, dict):
        schedule = dict(schedule)
        week_days = schedule.get("weekDays")
        if isinstance(week_days, list):
            schedule["weekDays"] = [_enum(day, style) for day in week_days]
        occurrences = schedule.get("monthlyOccurrences")
        if isinstance(occurrences, list):
            schedule["monthlyOccurrences"] = [_occurrence(entry, style) for entry in occurrences]
        result["schedule"] = schedule
    return result


def _occurrence(entry: Any, style: Dialect) -> Any:
    if not isinstance(entry, dict):
        return entry
    result = {k: v for k, v in entry.items() if k != "occurrence"}
    if "day" in result:
        result["day"] = _enum(result["day"], style)
    if "occurrence" in entry:
        result.update({key: entry["occurrence"] for key in style.occurrence_keys})
    return result


def _certificate(request: JSONObject, style: Dialect) -> JSONObject:
    """A request's authentication with a client certificate's expiry under `style`'s keys."""
    auth = as_object(request["authentication"])
    if "certificateExpirationDate" not in auth:
        return auth
    result = {k: v for k, v in auth.items() if k != "certificateExpirationDate"}
    expiry = auth["certificateExpirationDate"]
    return {**result, **{key: expiry for key in style.certificate_expiry_keys}}


def _action(action: JSONObject, style: Dialect) -> JSONObject:
    """An action (and its errorAction) with its enums and key spellings as `style` writes
    them; its `type` and an HTTP authentication's `type` stay as they are."""
    result = dict(action)
    policy = result.get("retryPolicy")
    if isinstance(policy, dict) and "retryType" in policy:
        result["retryPolicy"] = {**policy, "retryType": _enum(policy["retryType"], style)}
    request = result.get("request")
    if isinstance(request, dict) and isinstance(request.get("authentication"), dict):
        result["request"] = {**request, "authentication": _certificate(request, style)}
    for name in _SERVICE_BUS:
        message = result.get(name)
        if isinstance(message, dict):
            message = dict(message)
            if "transportType" in message:
                message["transportType"] = _enum(message["transportType"], style)
            authentication = message.get("authentication")
            if isinstance(authentication, dict):
                sb_auth = dict(authentication)
                if "type" in sb_auth:
                    sb_auth["type"] = _enum(sb_auth["type"], style)
                message["authentication"] = sb_auth
            result[name] = message
    error_action = result.get("errorAction")
    if isinstance(error_action, dict):
        result["errorAction"] = _action(error_action, style)
    return result
