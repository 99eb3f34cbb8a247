"""Capture the Jobs entities a version of the code writes, and its API answers to them.

Run once from the code whose stored format is the reference (it was run on main before
issue 21 gave the definition a type: `stored_jobs.json` beside this file), never by the test
suite: the test (`test_stored_format_api.py`) writes these entities back into Azurite as they are
and checks that the current code answers exactly what that code answered, and stores exactly
what it stored. Real Azurite, real HTTP, every action type and every extension property.

    .venv/bin/python -m tests.api.capture_stored_jobs > tests/api/stored_jobs.json
"""

from __future__ import annotations

import json
import sys
import uuid
from datetime import datetime
from typing import Any

import httpx

from devtools.azurite import start_azurite
from scheduler_lib.api import create_app
from scheduler_lib.config import Settings
from scheduler_lib.identity_audiences import IdentityAudiences
from scheduler_lib.store.tables import TableStore
from tests.support.api_server import ManualClock, serve

SUB = "00000000-0000-0000-0000-000000000001"
COLLECTION = (
    f"/subscriptions/{SUB}/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/coll"
)
VERSIONS = ("2016-03-01", "2026-12-01")
HTTP = {"type": "Http", "request": {"uri": "http://example.com/ping", "method": "GET"}}

#: (job name, api-version of the PUT, properties): every action type and extension.
JOBS: list[tuple[str, str, dict[str, Any]]] = [
    ("plain-http", "2016-03-01", {"action": HTTP}),
    (
        "https-basic",
        "2016-03-01",
        {
            "startTime": "2026-03-05T10:30:00Z",
            "recurrence": {
                "frequency": "week",
                "interval": 2,
                "schedule": {"weekDays": ["monday", "Friday"], "hours": [9], "minutes": [0, 30]},
            },
            "action": {
                "type": "Https",
                "request": {
                    "uri": "https://example.com/hook",
                    "method": "POST",
                    "body": '{"a": 1}',
                    "headers": {"Content-Type": "application/json"},
                    "authentication": {"type": "Basic", "username": "u", "password": "pw"},
                },
                "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 2},
            },
        },
    ),
    (
        "timespan-2016",
        "2016-03-01",
        {
            "recurrence": {
                "frequency": "Month",
                "schedule": {"monthlyOccurrences": [{"day": "Monday", "Occurrence": 1}]},
                "count": 10,
            },
            "action": {
                **HTTP,
                "retryPolicy": {"retryType": "Fixed", "retryInterval": "00:01:30"},
                "errorAction": {
                    "type": "Http",
                    "request": {"uri": "http://example.com/error", "method": "PUT", "body": "x"},
                },
            },
        },
    ),
    (
        "oauth",
        "2016-03-01",
        {
            "startTime": "2026-04-01T08:00:00",
            "recurrence": {
                "frequency": "Day",
                "endTime": "2027-01-01T00:00:00",
                "timeZone": "W. Europe Standard Time",
            },
            "action": {
                "type": "Http",
                "request": {
                    "uri": "https://example.com/api",
                    "method": "DELETE",
                    "authentication": {
                        "type": "ActiveDirectoryOAuth",
                        "tenant": "contoso.com",
                        "audience": "https://management.core.windows.net/",
                        "clientId": "cid",
                        "secret": "s3cret",
                    },
                },
                "retryPolicy": {"retryType": "None"},
            },
            "state": "Disabled",
        },
    ),
    (
        "storage-queue",
        "2016-03-01",
        {
            "recurrence": {"frequency": "Hour", "interval": 6},
            "action": {
                "type": "StorageQueue",
                "queueMessage": {
                    "storageAccount": "acct",
                    "queueName": "q",
                    "sasToken": "?sv=1&sig=x",
                    "message": "hello",
                },
            },
        },
    ),
    (
        "service-bus-queue",
        "2016-03-01",
        {
            "action": {
                "type": "ServiceBusQueue",
                "serviceBusQueueMessage": {
                    "queueName": "orders",
                    "namespace": "contoso-bus",
                    "transportType": "AMQP",
                    "message": "m",
                    "authentication": {
                        "type": "SharedAccessKey",
                        "sasKeyName": "root",
                        "sasKey": "k",
                    },
                    "brokeredMessageProperties": {"label": "l"},
                    "customMessageProperties": {"kind": "tick"},
                },
            },
        },
    ),
    (
        "service-bus-topic",
        "2016-03-01",
        {
            "recurrence": {"frequency": "Minute", "interval": 15},
            "action": {
                "type": "ServiceBusTopic",
                "serviceBusTopicMessage": {
                    "topicPath": "events",
                    "namespace": "contoso-bus",
                    "transportType": "NetMessaging",
                    "message": "t",
                    "authentication": {
                        "type": "SharedAccessKey",
                        "sasKeyName": "root",
                        "sasKey": "k",
                    },
                },
            },
        },
    ),
    (
        "policies-2026",
        "2026-12-01",
        {
            "startTime": "2026-03-05T10:30:00Z",
            "recurrence": {"frequency": "Hour"},
            "concurrencyPolicy": "BufferOne",
            "missedRunPolicy": "RunAll",
            "catchUpWindow": "PT6H",
            "maxJitter": "PT5M",
            "pauseAfterConsecutiveFailures": 3,
            "pauseNote": "watch it",
            "action": {
                **HTTP,
                "timeout": "PT2M",
                "retryPolicy": {
                    "retryType": "Exponential",
                    "retryInterval": "PT20S",
                    "retryCount": 5,
                    "maxRetryInterval": "PT10M",
                    "maxRetryDuration": "PT1H",
                    "retryOn": ["5xx", 429, "transport"],
                },
                "errorAction": {**HTTP, "timeout": "PT30S"},
            },
        },
    ),
    (
        "placeholders-queue-2026",
        "2026-12-01",
        {
            "concurrencyPolicy": "Forbid",
            "missedRunPolicy": "RunLatest",
            "placeholders": False,
            "action": {
                "type": "StorageQueue",
                "queueMessage": {
                    "storageAccount": "acct",
                    "queueName": "q",
                    "sasToken": "?sv=1&sig=x",
                    "message": "run",
                    "envelope": True,
                },
            },
        },
    ),
    (
        "identity-2026",
        "2026-12-01",
        {
            "action": {
                "type": "Http",
                "request": {
                    "uri": "https://orders.example.com/run",
                    "method": "POST",
                    "body": "{}",
                    "authentication": {
                        "type": "ManagedServiceIdentity",
                        "audience": "api://orders",
                    },
                },
            },
        },
    ),
]


def main() -> None:
    azurite = start_azurite()
    try:
        settings = Settings(
            storage_connection_string=azurite.connection_string,
            api_keys=("test-key",),
            storage_prefix="c" + uuid.uuid4().hex[:12],
            storage_queue_endpoint=azurite.queue_endpoint_template,
            identity_audiences=IdentityAudiences.parse("api://orders=orders.example.com"),
        )
        clock = ManualClock()
        captured: dict[str, Any] = {"now": clock.now.isoformat(), "jobs": []}
        with serve(create_app(settings, clock=clock)) as server:
            for name, version, properties in JOBS:
                with _client(server.api_url, version) as http:
                    if name == JOBS[0][0]:
                        made = http.put(
                            COLLECTION,
                            json={
                                "location": "westus",
                                "properties": {"sku": {"name": "Standard"}},
                            },
                        )
                        made.raise_for_status()
                    put = http.put(f"{COLLECTION}/jobs/{name}", json={"properties": properties})
                    if put.status_code >= 300:
                        sys.exit(f"{name}: {put.status_code} {put.text}")
            store = TableStore(settings)
            for entity in store.table("Jobs").list_entities():
                if entity["RowKey"].startswith("~") or "Definition" not in entity:
                    continue
                answers = {}
                for version in VERSIONS:
                    with _client(server.api_url, version) as http:
                        got = http.get(f"{COLLECTION}/jobs/{entity['Name']}")
                        got.raise_for_status()
                        answers[version] = got.json()
                captured["jobs"].append({"entity": _plain(entity), "answers": answers})
    finally:
        azurite.stop()
    json.dump(captured, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


def _client(url: str, version: str) -> httpx.Client:
    return httpx.Client(
        base_url=url,
        headers={"Authorization": "Bearer test-key"},
        params={"api-version": version},
        timeout=30,
    )


def _plain(entity: Any) -> dict[str, Any]:
    """The entity's columns: a datetime as {"datetime": ISO text} so it is written back as one."""
    return {
        key: {"datetime": value.isoformat()} if isinstance(value, datetime) else value
        for key, value in entity.items()
    }


if __name__ == "__main__":
    main()
