"""Extensions 2 and 3 (2026-12-01): per-job policies for occurrences that cannot run at
their time, validated here. `concurrencyPolicy` (Kubernetes CronJob's, plus Quartz's and
Temporal's "buffer one"): what an occurrence does when the previous one is still running,
applied by the executor (`execution/overlap.py`)."""

from __future__ import annotations

from typing import Any

from scheduler_lib.domain import ConcurrencyPolicy
from scheduler_lib.domain.definition import CONCURRENCY_POLICY
from scheduler_lib.wire import readers
from scheduler_lib.wire.versions import ExtensionProperty, Location


def concurrency_policy(value: Any, path: str) -> str:
    return readers.enum(value, path, [policy.value for policy in ConcurrencyPolicy])


CONCURRENCY_SCHEMA = {
    "type": "string",
    "enum": [policy.value for policy in ConcurrencyPolicy],
    "description": "What a scheduled occurrence due while the previous one (retries "
    "included) is still running does: Allow (runs alongside; default), Forbid (not run, "
    "recorded as Skipped), BufferOne (runs as soon as the previous one ends; at most one "
    "waits, a second one is Skipped).",
}

#: Its entry in the catalog (`extension_catalog`).
ENTRY = ExtensionProperty(Location.JOB, CONCURRENCY_POLICY, concurrency_policy, CONCURRENCY_SCHEMA)
