"""Standard Webhooks signatures on HTTP actions (extension 6, api-version 2026-12-01).

A collection with signing secrets (`wire/signing.py`) signs each HTTP attempt of its jobs
so a target can tell the request came from this scheduler and was not changed or replayed
(https://www.standardwebhooks.com): `webhook-id` (the same for every attempt of one action
of one occurrence, so a receiver de-duplicates retries), `webhook-timestamp` (Unix seconds,
when the attempt was sent, so it can refuse old replays) and `webhook-signature`, one
`v1,<base64 HMAC-SHA256 of "id.timestamp.body">` per active secret, space-separated, so a
receiver holding either the old or the new secret verifies during a rotation.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Sequence

from scheduler_lib.wire.signing import PREFIX


def signature_headers(
    secrets: Sequence[str], webhook_id: str, timestamp: int, body: bytes
) -> dict[str, str]:
    """The three headers for `body` (empty when the request has none)."""
    signed = f"{webhook_id}.{timestamp}.".encode() + body
    signatures = []
    for secret in secrets:
        key = base64.b64decode(secret.removeprefix(PREFIX))
        digest = hmac.new(key, signed, hashlib.sha256).digest()
        signatures.append("v1," + base64.b64encode(digest).decode())
    return {
        "webhook-id": webhook_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(signatures),
    }
