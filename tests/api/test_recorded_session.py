"""Replay a recorded api-version 2016-03-01 session and compare every answer field by field.

The session (`recordings/job_session_2016_03_01.json`) is written in the format of the Azure
SDK for .NET's recorded test sessions (`Entries` of `RequestUri`, `RequestMethod`,
`RequestBody`, `StatusCode`, `ResponseBody`), with the request bodies that SDK sends and the
answers Azure Scheduler gave them: a collection and a job created, read, patched, listed,
deleted; the collection replaced Suspended, listed, deleted. `Volatile` names the answer
fields that are not compared (messages worded by this API). Any other difference is reported
by its path, so a change to how an answer is written shows exactly where.
"""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path
from typing import Any

import pytest

SESSION = Path(__file__).with_name("recordings") / "job_session_2016_03_01.json"


def differences(expected: Any, actual: Any, path: str, volatile: list[str]) -> list[str]:
    """Every difference between two JSON values, as `path: expected != actual` (missing and
    extra keys named), leaving out the paths that match a `volatile` pattern."""
    if any(fnmatch.fnmatchcase(path, pattern) for pattern in volatile):
        return []
    if isinstance(expected, dict) and isinstance(actual, dict):
        found: list[str] = []
        for key in sorted(set(expected) | set(actual)):
            where = f"{path}.{key}" if path else key
            if key not in actual:
                found.append(f"{where}: missing")
            elif key not in expected:
                found.append(f"{where}: not expected ({actual[key]!r})")
            else:
                found += differences(expected[key], actual[key], where, volatile)
        return found
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        return [
            d
            for index, (e, a) in enumerate(zip(expected, actual, strict=True))
            for d in differences(e, a, f"{path}[{index}]", volatile)
        ]
    if expected != actual or type(expected) is not type(actual):
        return [f"{path or 'body'}: {expected!r} != {actual!r}"]
    return []


def test_the_comparison_names_each_difference() -> None:
    expected = {"a": {"b": [1, {"c": "x"}]}, "gone": 1, "msg": "m"}
    actual = {"a": {"b": [1, {"c": "y"}]}, "new": 2, "msg": "other"}
    assert differences(expected, actual, "", ["msg"]) == [
        "a.b[1].c: 'x' != 'y'",
        "gone: missing",
        "new: not expected (2)",
    ]


def test_the_recorded_session_replays(client) -> None:
    session = json.loads(SESSION.read_text())
    volatile = session["Volatile"]
    for number, entry in enumerate(session["Entries"], start=1):
        uri, _, query = entry["RequestUri"].partition("?")
        assert query == "api-version=2016-03-01"
        response = client.request(entry["RequestMethod"], uri, json=entry["RequestBody"])
        what = f"entry {number}: {entry['RequestMethod']} {uri}"
        assert response.status_code == entry["StatusCode"], f"{what}: {response.text}"
        actual = response.json() if response.content else None
        found = differences(entry["ResponseBody"], actual, "", volatile)
        assert found == [], f"{what}:\n" + "\n".join(found)


@pytest.fixture(autouse=True)
def _session_exists() -> None:
    assert SESSION.is_file()
