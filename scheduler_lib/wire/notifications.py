"""Notifications (2026-12-01): a collection's (or a job's own) webhook subscriptions,
validated and kept here; sent by `scheduler_lib/notify` (docs/notifications.md).

`notifications` is a list of at most `MAX_SUBSCRIPTIONS` objects `{url, events, format,
secret, everyFailure}`, on a job collection (for every job in it) or on a job (which then
replaces its collection's list; `[]` silences the job). `secret` is a Standard Webhooks
signing secret (`whsec_<base64>`, as a collection's signing secrets): write-only like every
secret here.
Answers show `hasSecret: true` instead, and a subscription sent back without `secret`
(the GET-modify-PUT of every SDK) keeps the stored secret of the subscription with the same
`url`, never another's: a secret never follows a subscription to a new destination.
`"secret": ""` removes it.

The URL's path and query are write-only too: a Slack, Teams or Power Automate webhook's
path (or `sig=` query) is itself the credential. Answers show `masked(url)`,
`scheme://host[:port]/***`, and a subscription sent back with that form keeps the stored URL
of the subscription it names (`_stored_url`: of those with the same origin, the only one,
else the one with the same events, else the one at the same position); a masked URL that
names none (or two) is a 400 asking for the full URL. A full URL replaces the stored one.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Final
from urllib.parse import urlsplit

from scheduler_lib.domain.definition import NOTIFICATIONS
from scheduler_lib.errors import ValidationError
from scheduler_lib.wire import readers, signing
from scheduler_lib.wire.shapes import JSONObject, NotificationSubscription, as_list, as_object
from scheduler_lib.wire.versions import ExtensionProperty, Location

PROPERTY = NOTIFICATIONS
#: Subscriptions per collection or job: each event is sent to each one, by the executor's
#: side (asynchronously); more than a few destinations is a fan-out service's job.
MAX_SUBSCRIPTIONS = 5
MAX_URL = 2048
SECRET: Final = "secret"
HAS_SECRET: Final = "hasSecret"
#: What stands for a URL's path and query in answers: `https://hooks.slack.com/***`.
MASK = "***"


class NotificationEvent(StrEnum):
    """What a subscription can ask for (docs/notifications.md)."""

    FAILED = "Failed"  # an occurrence's main action failed after its retries
    FAULTED = "Faulted"  # the job itself became Faulted (the executor gave up on it)
    RECOVERED = "Recovered"  # the first success after a failure (or after Overdue)
    PAUSED = "Paused"  # stop-after-failures disabled the job
    MISSED = "Missed"  # the dead-man switch: no success within its window
    POSTPONED = "Postponed"  # occurrences missed by downtime or past the grace period


class NotificationFormat(StrEnum):
    JSON = "Json"  # the event as JSON, signed (Standard Webhooks)
    TEAMS = "Teams"  # a Microsoft Teams incoming webhook (MessageCard)
    SLACK = "Slack"  # a Slack incoming webhook (text and blocks)


EVENTS = tuple(event.value for event in NotificationEvent)
FORMATS = tuple(kind.value for kind in NotificationFormat)
_KEYS = ("url", "events", "format", SECRET, "everyFailure", HAS_SECRET)

SCHEMA: JSONObject = {
    "type": "array",
    "maxItems": MAX_SUBSCRIPTIONS,
    "description": "Webhooks told about this job's (or every job's of the collection) "
    "failures, recoveries, pauses, dead-man alerts and postponements; a job's own list "
    "replaces its collection's. secret is write-only (hasSecret says one is stored).",
    "items": {
        "type": "object",
        "required": ["url", "events"],
        "properties": {
            "url": {
                "type": "string",
                "format": "uri",
                "maxLength": MAX_URL,
                "description": "Shown as scheme://host[:port]/*** (the path and query are "
                "write-only); sent back so, it keeps the stored URL.",
            },
            "events": {
                "type": "array",
                "minItems": 1,
                "items": {"type": "string", "enum": list(EVENTS)},
            },
            "format": {"type": "string", "enum": list(FORMATS), "default": "Json"},
            "secret": {"type": "string", "writeOnly": True},
            "everyFailure": {
                "type": "boolean",
                "default": False,
                "description": "Failed for every failed occurrence, not once per streak.",
            },
            "hasSecret": {"type": "boolean", "readOnly": True},
        },
    },
}


def validate(value: Any, path: str) -> list[NotificationSubscription]:
    """The subscriptions in canonical form (a missing `secret` is filled by `carry_over`)."""
    if not isinstance(value, list):
        raise ValidationError(path, "must be a list of {url, events, format, secret}")
    if len(value) > MAX_SUBSCRIPTIONS:
        raise ValidationError(path, f"at most {MAX_SUBSCRIPTIONS} subscriptions")
    result = []
    for index, item in enumerate(value):
        where = readers.join(path, index)
        source = readers.keys(item, where, _KEYS)
        entry: NotificationSubscription = {
            "url": _url(source.get("url"), readers.join(where, "url"))
        }
        entry["events"] = _events(source.get("events"), readers.join(where, "events"))
        kind = source.get("format")
        entry["format"] = (
            readers.enum(kind, readers.join(where, "format"), FORMATS) if kind else "Json"
        )
        if source.get("everyFailure") is not None:
            every = readers.boolean(source["everyFailure"], readers.join(where, "everyFailure"))
            if every:
                entry["everyFailure"] = True
        if source.get(SECRET) is not None:
            entry[SECRET] = _secret(source[SECRET], readers.join(where, SECRET))
        result.append(entry)
    return result


def _url(value: Any, path: str) -> str:
    if value is None:
        raise ValidationError(path, "is required")
    text = readers.string(value, path, max_length=MAX_URL)
    try:
        parts = urlsplit(text)
    except ValueError:
        raise ValidationError(path, "is not a URL") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValidationError(path, "must be an absolute http(s) URL")
    if parts.username or parts.password:
        raise ValidationError(path, "must not hold a user name or password")
    return text


def _events(value: Any, path: str) -> list[str]:
    if not isinstance(value, list) or not value:
        raise ValidationError(path, f"must be a non-empty list of {', '.join(EVENTS)}")
    events: list[str] = []
    for index, item in enumerate(value):
        event = readers.enum(item, readers.join(path, index), EVENTS)
        if event in events:
            raise ValidationError(readers.join(path, index), f"{event} is given twice")
        events.append(event)
    return events


def _secret(value: Any, path: str) -> str:
    text = readers.string(value, path, max_length=200, empty=True)
    if text == signing.GENERATE:
        raise ValidationError(path, f"must be '{signing.PREFIX}<base64>' (or '' for none)")
    return signing.read_secret(text, path) if text else ""


def masked(url: str) -> str:
    """The URL as answers show it: scheme, host and port kept, path and query `MASK`ed."""
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}/{MASK}"


def is_masked(url: str) -> bool:
    """Whether `url` is the form `masked` shows (sent back by a GET-modify-PUT)."""
    parts = urlsplit(url)
    return parts.path == f"/{MASK}" and not parts.query and not parts.fragment


def carry_over(new: JSONObject, old: Mapping[str, Any] | None) -> None:
    """Give each subscription of `new` (job definition or collection properties, in place)
    sent with a masked URL the stored URL it names (a 400 naming the field when none), and
    each sent without `secret` the stored secret of `old`'s subscription with the same URL;
    drop the `""` that removes one."""
    before = list((old or {}).get(PROPERTY) or ())
    subscriptions = [as_object(entry) for entry in as_list(new.get(PROPERTY))]  # validated
    for index, entry in enumerate(subscriptions):
        url = entry.get("url")
        if isinstance(url, str) and is_masked(url):
            entry["url"] = _stored_url(entry, index, before)
    stored = {entry["url"]: entry[SECRET] for entry in before if entry.get(SECRET)}
    for entry in subscriptions:
        url = entry.get("url")
        if SECRET not in entry and isinstance(url, str) and url in stored:
            entry[SECRET] = stored[url]
        elif entry.get(SECRET) == "":
            del entry[SECRET]


def _stored_url(entry: Mapping[str, Any], index: int, before: list[Mapping[str, Any]]) -> str:
    """The stored URL a masked one names. Among the stored subscriptions with the same
    origin (scheme, host, port): the only one; of several, the only one with the same
    events; of several still (or none with those events), the one at the same position.
    Never a guess between two: a 400 asking for the full URL."""
    shown = masked(entry["url"])  # `HTTPS://Hooks.Slack.com/***` names the same origin
    alike = [i for i, e in enumerate(before) if masked(e["url"]) == shown]
    if len(alike) > 1:
        events = set(entry["events"])
        same = [i for i in alike if set(before[i]["events"]) == events]
        alike = same if len(same) == 1 else [i for i in same or alike if i == index]
    if len(alike) == 1:
        return str(before[alike[0]]["url"])
    raise ValidationError(
        f"properties.{PROPERTY}[{index}].url",
        f"is masked ({shown}) and names no one stored subscription (the only one with that "
        "origin, else with its events, else at its position): send the full URL",
    )


def redact(properties: Mapping[str, Any]) -> dict[str, Any]:
    """A copy without the subscriptions' secrets (`hasSecret` says which have one) and with
    their URLs masked."""
    result: JSONObject = dict(properties)
    if PROPERTY in result:
        shown = as_list(copy.deepcopy(result[PROPERTY]))
        for entry in shown:
            if not isinstance(entry, dict):
                continue
            url = entry.get("url")
            if isinstance(url, str):
                entry["url"] = masked(url)
            if entry.pop(SECRET, None):
                entry[HAS_SECRET] = True
        result[PROPERTY] = shown
    return result


#: A collection's subscriptions are the default of its jobs; a job's own replace them.
ENTRIES = (
    ExtensionProperty(Location.COLLECTION, PROPERTY, validate, SCHEMA),
    ExtensionProperty(Location.JOB, PROPERTY, validate, SCHEMA),
)
