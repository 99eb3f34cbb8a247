"""API versions, and what an extension property of the 2026-12-01 version is.

The 2016-03-01 surface is Azure Scheduler's and stays exactly as it was, so the real SDK and
pasted job JSON keep working. What the scheduler adds beyond it is served only under its own
version, `2026-12-01`: each addition is one `ExtensionProperty` (or `ExtensionChoice`, a new
value of an existing enum) in `extension_catalog.CATALOG`, found by its `Location`. Validation
(`extensions`) accepts it only in a request of a version that has it; responses of an older
version leave it out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from scheduler_lib.domain import JobRecord
from scheduler_lib.errors import ValidationError
from scheduler_lib.wire.shapes import JSONObject


class ApiVersion(StrEnum):
    """The versions served, oldest first (their order is the order of `ApiVersion`)."""

    V2016_03_01 = "2016-03-01"
    V2026_12_01 = "2026-12-01"

    def has(self, since: ApiVersion) -> bool:
        """Whether this version includes what `since` introduced (asked for each catalog
        entry of each object a request reads or an answer shows: a lookup, not a walk of
        the enum)."""
        return _ORDER[self] >= _ORDER[since]


_ORDER = {version: index for index, version in enumerate(ApiVersion)}
#: A request without `api-version` is a 2016-03-01 request, as it always was.
DEFAULT_VERSION = ApiVersion.V2016_03_01
LATEST_VERSION = ApiVersion.V2026_12_01


def require(version: ApiVersion, since: ApiVersion, what: str) -> None:
    """A 400 naming `api-version` when a request of `version` uses `what` (a route, a
    parameter) that only `since` has."""
    if not version.has(since):
        raise ValidationError("api-version", f"must be {since.value} for {what}")


def parse_version(value: str | None) -> ApiVersion:
    """The version a request asks for (absent: 2016-03-01), or a ValidationError naming
    `api-version` and listing the versions served."""
    if value is None:
        return DEFAULT_VERSION
    for version in ApiVersion:
        if value == version.value:
            return version
    served = " or ".join(version.value for version in ApiVersion)
    raise ValidationError("api-version", f"must be {served}")


class Location(StrEnum):
    """Where an extension property lives: the object of the job or collection JSON it is a
    key of. The value is the object's path in the stored job definition (the wire path
    starts with `properties.`); an action's locations apply to its errorAction too unless
    the property says otherwise."""

    JOB = ""
    ACTION = "action"
    REQUEST = "action.request"
    #: `action.request.authentication`; its `type` takes `ExtensionChoice`s too.
    AUTHENTICATION = "action.request.authentication"
    RETRY_POLICY = "action.retryPolicy"
    #: A StorageQueue action's `queueMessage`.
    QUEUE_MESSAGE = "action.queueMessage"
    RECURRENCE = "recurrence"
    #: Read-only properties under `status`, computed from the job record (`ExtensionStatus`).
    JOB_STATUS = "status"
    #: The properties of a job collection (`sku`, `state`, `quota` in 2016-03-01).
    COLLECTION = "collection"


#: value, JSON path -> canonical stored value (raises ValidationError naming `path`).
Validator = Callable[[Any, str], Any]
#: the complete canonical definition, the property's stored value, its JSON path -> None;
#: for rules that involve other properties (e.g. a bound from the recurrence).
CrossCheck = Callable[[JSONObject, Any, str], None]


@dataclass(frozen=True)
class ExtensionProperty:
    """One property an API version adds to an object of the 2016-03-01 JSON.

    `schema` is its JSON schema in the version's OpenAPI document; `error_action`: whether
    an action location's property applies to `action.errorAction` too; `default`: the
    value a request of a version that has it stores when it leaves it out (None: nothing)."""

    location: Location
    name: str
    validate: Validator
    schema: dict[str, Any]
    since: ApiVersion = LATEST_VERSION
    cross_check: CrossCheck | None = None
    error_action: bool = True
    default: Any = None


@dataclass(frozen=True)
class ExtensionChoice:
    """A new value of a 2016-03-01 enum, e.g. a retryType. `field` is the enum's key at its
    location; `shown_to_older` is what an older version's response shows instead (its
    sibling extension properties are left out as any other)."""

    location: Location
    field: str
    value: str
    shown_to_older: str
    since: ApiVersion = LATEST_VERSION


@dataclass(frozen=True)
class ExtensionStatus:
    """A read-only property under a job's `status`, computed from the record (None: left
    out)."""

    name: str
    read: Callable[[JobRecord], Any]
    schema: JSONObject
    since: ApiVersion = LATEST_VERSION


@dataclass(frozen=True)
class Catalog:
    """Every extension, in one place (see `extension_catalog.CATALOG`)."""

    properties: tuple[ExtensionProperty, ...] = ()
    choices: tuple[ExtensionChoice, ...] = ()
    statuses: tuple[ExtensionStatus, ...] = ()
