"""The main flows through Azure Scheduler's real Node SDK (`azure-arm-scheduler`, the
api-version 2016-03-01 client on `ms-rest`), pointed at our API.

`tests/node_sdk/roundtrip.js` creates a job with a value in every field, reads it, writes
back what it read and lists; it prints what the SDK's models hold. The SDK passes enum
values through as the service wrote them (it validates them case-insensitively only when it
sends them), finds a key case-insensitively when the exact spelling is missing, and reads a
TimeSpan or an ISO 8601 duration alike (moment). Its packages are installed from
`tests/node_sdk/package-lock.json` by `make test` (`npm ci --prefix tests/node_sdk`).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from scheduler_lib.store.jobs import get_job
from tests.api.conftest import RG, SUB

PROJECT = Path(__file__).parent.parent / "node_sdk"


def _run(api_url: str) -> dict[str, Any]:
    node = shutil.which("node")
    assert node, "Node 20 is one of the three things a fresh machine needs (README)"
    assert (PROJECT / "node_modules" / "azure-arm-scheduler").is_dir(), (
        "run `make test` once (it runs npm ci --prefix tests/node_sdk)"
    )
    done = subprocess.run(
        [node, str(PROJECT / "roundtrip.js"), api_url, "test-key", SUB, RG],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.fixture
def node_session(server, store) -> tuple[dict[str, Any], Any]:
    return _run(server.api_url), store


def test_the_node_sdk_reads_and_round_trips_every_field(node_session) -> None:
    result, store = node_session
    read = result["read"]["properties"]
    assert read["state"] == "enabled"  # passed through as 2016-03-01 wrote it
    assert read["recurrence"]["frequency"] == "month"
    assert read["recurrence"]["schedule"]["monthlyOccurrences"] == [
        {"day": "friday", "occurrence": -1}
    ]
    assert read["action"]["retryPolicy"] == {
        "retryType": "fixed",
        "retryInterval": "PT2M",
        "retryCount": 3,
    }
    topic = read["action"]["errorAction"]["serviceBusTopicMessage"]
    assert (topic["transportType"], topic["authentication"]["type"]) == (
        "amqp",
        "sharedAccessKey",
    )
    assert topic["brokeredMessageProperties"]["timeToLive"] == "PT1H"
    assert "password" not in read["action"]["request"]["authentication"]
    # What it read, written back, is the same job (secrets carried over).
    assert result["written"]["properties"]["action"] == result["created"]["properties"]["action"]
    stored = get_job(store, SUB, RG, "nodecoll", "hook").definition.document
    assert stored["action"]["request"]["authentication"]["password"] == "node-secret"
    assert (
        stored["action"]["errorAction"]["serviceBusTopicMessage"]["authentication"]["sasKey"]
        == "sb-secret"
    )
    assert stored["recurrence"]["schedule"]["monthlyOccurrences"] == [
        {"day": "Friday", "occurrence": -1}
    ]


def test_the_node_sdk_reads_collections_and_lists(node_session) -> None:
    result, _ = node_session
    collection = result["collection"]["properties"]
    assert collection["state"] == "Enabled"
    assert collection["quota"]["maxRecurrence"] == {"frequency": "minute", "interval": 1}
    # Lists end with `"nextLink": null` (2016-03-01), which the SDK takes as the last page.
    assert result["jobs"] == ["nodecoll/hook"] and result["collections"] == ["nodecoll"]
