"""What the notification tests share: the running system (tests/test_end_to_end.py's:
the real API over HTTP, Azurite, the real runtime on a hand-moved clock), a job every five
minutes, and a minute as the Functions host plays it: the tick (with its upkeep, where the
dead-man switch is judged), the executions, the notifications queue's function.

Occurrences are five minutes apart and dispatching ticks land on them: a tick in the minute
before an occurrence sends it ahead with a real visibility delay (the look-ahead), which a
test would have to sleep through; in those minutes only the tick's upkeep runs."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from datetime import datetime
from typing import Any

from scheduler_lib.notify import NotifyReport
from tests.support.http_target import RecordedRequest
from tests.test_end_to_end import COLLECTION, System

NEW = {"api-version": "2026-12-01"}


def new_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def put_job(running: System, name: str, properties: dict[str, Any]) -> dict[str, Any]:
    response = running.client.put(
        f"{COLLECTION}/jobs/{name}", json={"properties": properties}, params=NEW
    )
    assert response.status_code in (200, 201), response.text
    return response.json()


INTERVAL = 5


def every_five_minutes(uri: str, start: datetime, **extra: Any) -> dict[str, Any]:
    """An Http job every `INTERVAL` minutes from `start`, without retries."""
    return {
        "startTime": start.isoformat().replace("+00:00", "Z"),
        "recurrence": {"frequency": "Minute", "interval": INTERVAL},
        "action": {
            "type": "Http",
            "request": {"uri": uri, "method": "GET"},
            "retryPolicy": {"retryType": "None"},
        },
        **extra,
    }


def minute(running: System, at: datetime) -> list[NotifyReport]:
    """At `at` (a whole minute): on an occurrence's minute the whole tick (coordinator,
    pairs, upkeep) and every visible execution message, else the tick's upkeep alone (see
    the module docstring); then every visible notice (the notifications function)."""
    running.clock.now = at
    if at.minute % INTERVAL == 0:
        running.runtime.tick()
        running.execute_visible()
    else:
        running.runtime.upkeep(at)
    return running.runtime.drain_notifications()


def status(running: System, name: str) -> dict[str, Any]:
    response = running.client.get(f"{COLLECTION}/jobs/{name}", params=NEW)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()["properties"]["status"]
    return result


def signature_ok(secret: str, request: RecordedRequest) -> bool:
    """Standard Webhooks' v1 signature, checked as a receiver does (by hand: the library
    refuses timestamps 5 minutes from its real clock, and these tests move time)."""
    webhook_id, timestamp = request.header("webhook-id"), request.header("webhook-timestamp")
    signed = f"{webhook_id}.{timestamp}.".encode() + request.body
    key = base64.b64decode(secret.removeprefix("whsec_"))
    expected = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return expected in (request.header("webhook-signature") or "").split(" ")
