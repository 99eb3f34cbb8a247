"""What the local host takes from host.json: the queue trigger's retry settings, read from
the file the Functions host reads rather than kept as a second copy here.

- `maxDequeueCount`: dequeues after which a failing message goes to the poison queue
  (the host's default: 5);
- `visibilityTimeout`: how long a message whose function failed stays hidden before the
  next try (a TimeSpan, `00:00:30` here; the host's default: none, retry at once);
- `maxPollingInterval`: the longest an idle queue trigger waits between polls, its back-off
  ceiling (`devtools/polling.py`; `00:00:01` here; the host's default: 1 minute).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from devtools.azurite import ROOT
from scheduler_lib.wire.durations import parse_time_to_live

HOST_JSON = ROOT / "host.json"


#: The Functions host's `maxPollingInterval` when host.json does not set one.
DEFAULT_MAX_POLLING_INTERVAL = "00:01:00"


def _queues(path: Path) -> dict[str, Any]:
    queues: dict[str, Any] = json.loads(path.read_text()).get("extensions", {}).get("queues", {})
    return queues


def max_polling_interval(path: Path = HOST_JSON) -> float:
    """host.json's `extensions.queues.maxPollingInterval`, in seconds."""
    value = _queues(path).get("maxPollingInterval", DEFAULT_MAX_POLLING_INTERVAL)
    field = "host.json extensions.queues.maxPollingInterval"
    return parse_time_to_live(value, field=field).total_seconds()


def queue_trigger_settings(path: Path = HOST_JSON) -> tuple[int, int]:
    """(maxDequeueCount, visibilityTimeout in whole seconds) of host.json's queues section."""
    queues = _queues(path)
    timeout = queues.get("visibilityTimeout")
    field = "host.json extensions.queues.visibilityTimeout"
    seconds = parse_time_to_live(timeout, field=field).total_seconds() if timeout else 0
    return int(queues.get("maxDequeueCount", 5)), int(seconds)
