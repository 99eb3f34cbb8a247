"""The wire JSON shapes, as TypedDicts: Azure Scheduler's 2016-03-01 definitions (the names
are the spec's). The properties our 2026-12-01 API adds (docs/extensions.md) are not
repeated here: each is declared once beside its field (`domain.definition`,
`domain.actions`) and added to these objects by its catalog entry (`wire.extensions`), so
a builder that merges them returns a JSON object.

Why TypedDicts and not dataclasses: these are the JSON the API reads, stores and writes, key
for key (`startTime`, `Occurrence` and all), so a typo in a key or a wrong value type is a
mypy error where the JSON is built, and `json.dumps` still takes them as they are. Every
field is optional (`total=False`) unless the spec or our canonical form always writes it:
a client may leave anything out, and the normalizers only add what was given.

`JSON` (`domain.json_values`, re-exported here) is for what is genuinely a tree of JSON (a
JSON Schema fragment, a document walked by path or rewritten by the extension catalog): a
recursive union that mypy checks, not an alias of Any.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Generic, Literal, NotRequired, TypedDict, TypeVar, cast

from scheduler_lib.domain.json_values import JSON, JSONObject, as_list, as_object, json_object

__all__ = ["JSON", "JSONObject", "as_list", "as_object", "json_object", "to_json"]


def to_json(shape: Mapping[str, object]) -> JSONObject:
    """A TypedDict of this module as a JSON object, to put into a JSON tree. mypy cannot see
    that a TypedDict is a `dict[str, JSON]` (it only knows it as a `Mapping[str, object]`);
    every shape here has JSON-typed fields only, so the cast is exact. Use it for these
    shapes, never for a mapping of unknown values."""
    return cast(JSONObject, shape)


Item = TypeVar("Item")


class ListPage(TypedDict, Generic[Item]):
    """A page of a list (JobListResult, JobCollectionListResult, JobHistoryListResult):
    `nextLink` when more follow (2016-03-01 writes a null one on the last page)."""

    value: list[Item]
    nextLink: NotRequired[str | None]


class JobRecurrenceScheduleMonthlyOccurrence(TypedDict, total=False):
    day: str
    # The spec spells it `Occurrence`; our canonical (stored) form is `occurrence`, and a
    # 2016-03-01 answer writes both (`dialect`).
    occurrence: int
    Occurrence: int


class JobRecurrenceSchedule(TypedDict, total=False):
    weekDays: list[str]
    hours: list[int]
    minutes: list[int]
    monthDays: list[int]
    monthlyOccurrences: list[JobRecurrenceScheduleMonthlyOccurrence]


class JobRecurrence(TypedDict, total=False):
    frequency: str
    interval: int
    count: int
    endTime: str
    schedule: JobRecurrenceSchedule


class HttpAuthentication(TypedDict, total=False):
    """All kinds in one (the spec's discriminated ClientCertAuthentication,
    BasicAuthentication, OAuthAuthentication, plus our ManagedIdentity): `type` says which
    of the others apply."""

    type: str
    # ClientCertificate
    pfx: str
    password: str
    certificateThumbprint: str
    certificateExpirationDate: str
    certificateSubjectName: str
    # Basic (and `password`)
    username: str
    # ActiveDirectoryOAuth (ManagedIdentity: `audience` only)
    secret: str
    tenant: str
    audience: str
    clientId: str


class HttpRequest(TypedDict, total=False):
    uri: str
    method: str
    body: str
    headers: dict[str, str]
    authentication: HttpAuthentication


class StorageQueueMessage(TypedDict, total=False):
    storageAccount: str
    queueName: str
    sasToken: str
    message: str


class ServiceBusAuthentication(TypedDict, total=False):
    sasKey: str
    sasKeyName: str
    type: str


class ServiceBusBrokeredMessageProperties(TypedDict, total=False):
    contentType: str
    correlationId: str
    forcePersistence: bool
    label: str
    messageId: str
    partitionKey: str
    replyTo: str
    replyToSessionId: str
    scheduledEnqueueTimeUtc: str
    sessionId: str
    timeToLive: str
    to: str
    viaPartitionKey: str


class ServiceBusMessage(TypedDict, total=False):
    """ServiceBusQueueMessage (`queueName`) and ServiceBusTopicMessage (`topicPath`)."""

    authentication: ServiceBusAuthentication
    brokeredMessageProperties: ServiceBusBrokeredMessageProperties
    customMessageProperties: dict[str, str]
    message: str
    namespace: str
    transportType: str
    queueName: str
    topicPath: str


class RetryPolicy(TypedDict, total=False):
    retryType: str
    retryInterval: str
    retryCount: int


class JobErrorAction(TypedDict, total=False):
    type: str
    request: HttpRequest
    queueMessage: StorageQueueMessage
    serviceBusQueueMessage: ServiceBusMessage
    serviceBusTopicMessage: ServiceBusMessage
    retryPolicy: RetryPolicy


class JobAction(JobErrorAction, total=False):
    errorAction: JobErrorAction


class NotificationSubscription(TypedDict, total=False):
    """One entry of the 2026-12-01 `notifications` list (collection or job)."""

    url: str
    events: list[str]
    format: str
    everyFailure: bool
    secret: str


class JobStatus(TypedDict, total=False):
    executionCount: int
    failureCount: int
    faultedCount: int
    lastExecutionTime: str
    nextExecutionTime: str


class JobProperties(TypedDict, total=False):
    startTime: str
    action: JobAction
    recurrence: JobRecurrence
    state: str
    status: JobStatus


class JobDefinition(TypedDict):
    """A job as the spec has it (`id`, `type`, `name` are read-only)."""

    id: str
    type: str
    name: str
    properties: JobProperties


class JobAnswer(TypedDict):
    """A JobDefinition as an answer writes it: its `properties` are the stored JobProperties
    as the request's api-version spells them (`dialect`: camelCase enums and extra key
    spellings in 2016-03-01), so a JSON object, not a `JobProperties`."""

    id: str
    type: str
    name: str
    properties: JSONObject


class JobHistoryDefinitionProperties(TypedDict, total=False):
    startTime: str
    endTime: str
    expectedExecutionTime: str
    actionName: Literal["MainAction", "ErrorAction"]
    status: str
    message: str
    retryCount: int
    repeatCount: int


class JobHistoryDefinition(TypedDict):
    id: str
    type: str
    name: str
    properties: JobHistoryDefinitionProperties


class JobHistoryAnswer(TypedDict):
    """A JobHistoryDefinition as an answer writes it: its `properties` as the history
    record keeps them (`store.history`), with the 2026-12-01 additions, a JSON object."""

    id: str
    type: str
    name: str
    properties: JSONObject


class Sku(TypedDict):
    name: str


class JobMaxRecurrence(TypedDict):
    frequency: str
    interval: int


class JobCollectionQuota(TypedDict, total=False):
    maxJobCount: int
    maxJobOccurrence: int
    maxRecurrence: JobMaxRecurrence


class JobCollectionProperties(TypedDict, total=False):
    sku: Sku
    state: str
    quota: JobCollectionQuota


class JobCollectionDefinition(TypedDict, total=False):
    id: str
    type: str
    name: str
    location: str
    tags: dict[str, str]
    properties: JobCollectionProperties
