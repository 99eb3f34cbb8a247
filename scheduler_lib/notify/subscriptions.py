"""Which subscriptions apply to a job: its own, else its collection's (a job's own
subscriptions, even `[]`, replace the collection's list). Which dead-man window applies is
`domain.deadman`'s rule."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from scheduler_lib.actions.egress import EgressDenied, policy_for
from scheduler_lib.config import Settings
from scheduler_lib.domain import CollectionRecord, JobRecord
from scheduler_lib.errors import ValidationError
from scheduler_lib.wire.notifications import PROPERTY
from scheduler_lib.wire.notifications import NotificationEvent as E
from scheduler_lib.wire.secrets import origin
from scheduler_lib.wire.shapes import JSONObject


def subscriptions(job: JobRecord, collection: CollectionRecord | None) -> list[JSONObject]:
    own = job.definition.notifications
    if own is not None:
        return [dict(entry) for entry in own]
    return list((collection.properties if collection else {}).get(PROPERTY) or ())


def wants(subscription: Mapping[str, Any], event: str, streak_before: int) -> bool:
    """Whether `subscription` is told `event`: a Failed only when it starts a streak
    (`streak_before` 0; -1: not known, told) unless it asks for `everyFailure`."""
    if event not in subscription.get("events", ()):
        return False
    return event != E.FAILED or streak_before <= 0 or bool(subscription.get("everyFailure"))


def key(subscription: Mapping[str, Any]) -> str:
    """A subscription's stable name in a record: a digest of its URL (never the URL: a
    Slack or Teams webhook's path is its credential)."""
    return hashlib.sha256(subscription["url"].encode()).hexdigest()[:12]


def target(subscription: Mapping[str, Any]) -> str:
    """Where it goes, as a record shows it: scheme, host and port only."""
    scheme, host, port = origin(subscription["url"])
    return f"{scheme}://{host}:{port}"


def check_destinations(properties: Mapping[str, Any], settings: Settings) -> None:
    """A 400 naming the subscription's `url` (its JSON path) when its host is a literal address or
    a metadata name the egress policy refuses (as an action's URI is checked when stored);
    host names are checked on their resolved addresses at each delivery."""
    policy = policy_for(settings)
    for index, entry in enumerate(properties.get(PROPERTY) or ()):
        host = urlsplit(entry["url"]).hostname or ""
        try:
            policy.check_host(host)
        except EgressDenied as exc:
            raise ValidationError(f"properties.{PROPERTY}[{index}].url", exc.message) from None
