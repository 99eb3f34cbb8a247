"""Fuzz the API with schemathesis from the official 2016-03-01 spec: no input, valid or not,
may produce a 5xx. The spec's paths lack our `/api` prefix, hence the base URL.

Half of the cases are pointed at an existing collection and job (so generated bodies reach
the job and collection logic rather than stopping at a 404); the other half keep their
generated names (which exercises name validation). Examples are bounded so the module
runs well under a minute.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings

from scheduler_lib.api import create_app
from scheduler_lib.config import Settings
from tests.api.conftest import RG, SUB, job_body, job_path, make_collection
from tests.support.api_server import ApiServer, ManualClock, serve

SPEC = Path(__file__).with_name("reference") / "scheduler-2016-03-01.json"
AUTH = {"Authorization": "Bearer test-key"}


#: What the API requires beyond the spec (which marks nothing required).
REQUIRED = {
    "JobDefinition": ["properties"],
    "JobProperties": ["action"],
    "JobAction": ["type"],
    "HttpRequest": ["uri", "method"],
}


def _typed(node: Any, name: str = "") -> Any:
    """The spec with `"type": "object"` and no extra keys on every definition that lists
    properties, plus `REQUIRED`. The official spec leaves all of that out, so most of its
    generated bodies stop at the first check; these reach the job and collection logic."""
    if isinstance(node, dict):
        typed = {key: _typed(value, key) for key, value in node.items()}
        if isinstance(node.get("properties"), dict) and "type" not in node:
            typed["type"] = "object"
            typed.setdefault("additionalProperties", False)
            if name in REQUIRED:
                typed["required"] = REQUIRED[name]
        return typed
    if isinstance(node, list):
        return [_typed(item) for item in node]
    return node


OFFICIAL = json.loads(SPEC.read_text())
SCHEMAS = {
    "official": schemathesis.openapi.from_dict(OFFICIAL),
    "typed": schemathesis.openapi.from_dict(_typed(OFFICIAL)),
}


@pytest.fixture(scope="module")
def fuzz_server(azurite) -> Iterator[ApiServer]:
    fuzz_settings = Settings(
        storage_connection_string=azurite.connection_string,
        api_keys=("test-key",),
        storage_prefix="f" + uuid.uuid4().hex[:12],
    )
    with serve(create_app(fuzz_settings, clock=ManualClock())) as server:
        yield server


@pytest.fixture(scope="module")
def helper(fuzz_server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=fuzz_server.api_url, headers=AUTH, timeout=30) as http:
        yield http


def _ensure_fixtures(http: httpx.Client) -> None:
    """(Re-)create the collection and job the pinned cases aim at (a case may delete them)."""
    if http.get(job_path("fuzzjob", "fuzzcoll")).status_code == 200:
        return
    make_collection(http, "fuzzcoll", sku={"name": "P20Premium"})
    http.put(job_path("fuzzjob", "fuzzcoll"), json=job_body())


OPERATIONS = [
    (name, result.ok())
    for name, schema in SCHEMAS.items()
    for result in schema.get_all_operations()
]


@pytest.mark.parametrize(
    ("variant", "operation"),
    OPERATIONS,
    ids=[
        f"{name}-{op.method.upper()} {op.path.rsplit('Microsoft.Scheduler', 1)[-1]}"
        for name, op in OPERATIONS
    ],
)
def test_no_input_gives_a_server_error(variant, operation, fuzz_server, helper):
    """Generated requests (valid per the spec, and the mutations schemathesis derives from
    it) for one operation; every answer is < 500 with an ARM error body when it is an error.
    `given` is driven here rather than through schemathesis' pytest plugin so that the
    number of requests stays bounded (its coverage phase alone sends hundreds)."""

    @given(operation.as_strategy())
    @settings(
        max_examples=12,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
        phases=[Phase.generate],
    )
    def check(case):
        _send(case, fuzz_server, helper)

    check()


def _send(case, server: ApiServer, helper: httpx.Client) -> None:
    params = case.path_parameters or {}
    if len(str(params.get("jobCollectionName", ""))) % 2 == 0:
        # Pin this case to the existing collection/job and a valid api-version, so that its
        # generated body and query reach the job and collection logic.
        _ensure_fixtures(helper)
        pinned = {"subscriptionId": SUB, "resourceGroupName": RG}
        if "jobCollectionName" in params:
            pinned["jobCollectionName"] = "fuzzcoll"
        if "jobName" in params:
            pinned["jobName"] = "fuzzjob"
        case.path_parameters = {**params, **pinned}
        case.query = {**(case.query or {}), "api-version": "2016-03-01"}
    response = case.call(base_url=server.api_url, headers=AUTH, timeout=30)
    assert response.status_code < 500, (case.method, case.formatted_path, response.text)
    assert response.headers.get("x-ms-request-id")
    if response.status_code >= 400:
        error = response.json()["error"]
        assert error["code"] and error["message"]
