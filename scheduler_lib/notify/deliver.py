"""One delivery of one notice to one subscription: an HTTP POST made by the Http action
itself (`actions.run_action`), so a notification goes through exactly what an action goes
through: the egress policy (private and metadata addresses refused unless the operator
allowed them, the resolved address pinned), no redirects followed, a deadline, and the
Standard Webhooks signature (`actions.signing`) with the subscription's secret and
`webhook-id` `msg_<notice id>`, the same on every retry of the notice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from scheduler_lib.actions import ExecutionContext, run_action
from scheduler_lib.config import Settings
from scheduler_lib.notify.formats import Names
from scheduler_lib.notify.notice import Notice

#: A receiver answers a webhook in seconds; one that does not is retried later.
TIMEOUT_SECONDS = 10.0
#: How much of a failed answer the record keeps.
MESSAGE_KEEP = 300


@dataclass(frozen=True)
class Sent:
    """How one delivery went."""

    succeeded: bool
    status_code: int | None
    message: str


def send(
    subscription: Mapping[str, Any],
    notice: Notice,
    payload: bytes,
    names: Names,
    settings: Settings,
    *,
    now: datetime,
    adapters: Mapping[str, Any],
) -> Sent:
    """POST `payload` to the subscription's URL, signed when it has a secret."""
    url = subscription["url"]
    scheme = urlsplit(url).scheme.lower()
    action = {
        "type": "Https" if scheme == "https" else "Http",
        "request": {
            "uri": url,
            "method": "POST",
            "headers": {"Content-Type": "application/json"},
            "body": payload.decode(),
        },
    }
    secret = subscription.get("secret")
    context = ExecutionContext(
        job_id=names[3],
        job_collection_id=names[2],
        expected_execution_time=notice.time,
        execution_tag=notice.notice_id,
        signing_secrets=(secret,) if secret else (),
        sent_at=now,
    )
    usable = {k: v for k, v in adapters.items() if k in ("verify",)}
    outcome = run_action(action, context, settings, timeout=TIMEOUT_SECONDS, **usable)
    return Sent(outcome.succeeded, outcome.status_code, outcome.message[:MESSAGE_KEEP])
