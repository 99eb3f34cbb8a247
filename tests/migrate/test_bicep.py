"""Bicep sources: params with defaults and @allowed, interpolation and escapes, operators,
object and array literals, `for` loops with filters, nested and `parent` jobs, and the same
refusals as ARM templates for what cannot be known."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from scheduler_lib.migrate.bicep import BicepFile
from scheduler_lib.migrate.bicep_resources import read_bicep
from scheduler_lib.migrate.compare import check_job
from scheduler_lib.migrate.convert import Target, build_plan
from scheduler_lib.migrate.deployment_functions import Deployment
from scheduler_lib.migrate.overrides import Overrides
from scheduler_lib.migrate.problems import SourceError, Unresolved

HEADER = """
param location string = resourceGroup().location
resource coll 'Microsoft.Scheduler/jobCollections@2016-03-01' = {
  name: 'coll'
  location: location
  properties: { sku: { name: 'Standard' } }
}
"""


def load(tmp_path: Path, source: str, *sets: str, given: dict[str, Any] | None = None) -> BicepFile:
    path = tmp_path / "main.bicep"
    path.write_text(source)
    return BicepFile(
        path,
        given=given or {},
        overrides=Overrides(sets),
        deployment=Deployment("s", "rg", "westus"),
    )


def variable(tmp_path: Path, expression: str, prelude: str = "") -> Any:
    file = load(tmp_path, f"{prelude}\nvar result = {expression}\n")
    return file.symbol("result", None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("'it\\'s ${1 + 2} \\${literal} \\u{41}'", "it's 3 ${literal} A"),
        ("'''multi\nline'''", "multi\nline"),
        ("toLower('ABC')", "abc"),
        ("sys.concat('a', 'b')", "ab"),
        ("10 / 4 * 2 % 3", 1),
        ("-5 + 2", -3),
        ("'a' == 'A' || 'a' =~ 'A'", True),
        ("!(1 < 2) ? 'x' : 'y'", "y"),
        ("null ?? 'fallback'", "fallback"),
        ("{ a: [1, 2], 'b-c': { d: true } }", {"a": [1, 2], "b-c": {"d": True}}),
        ("[for i in range(0, 3): i * 2]", [0, 2, 4]),
        ("[for (x, i) in ['a', 'b']: '${x}${i}']", ["a0", "b1"]),
        ("{ a: 1 }.?b ?? 'none'", "none"),
        ("[1][?5] ?? 'none'", "none"),
        ("dateTimeAdd('2026-03-02T09:00:00Z', 'PT30M')", "2026-03-02T09:30:00Z"),
        ("string(true)", "True"),
        ("'${true}'", "True"),
        ("any(3)", 3),
    ],
)
def test_expressions(tmp_path: Path, expression: str, expected: Any) -> None:
    assert variable(tmp_path, expression) == expected


def test_params_defaults_given_set_and_allowed(tmp_path: Path) -> None:
    source = "@allowed([\n  'Free'\n  'Standard'\n])\nparam sku string = 'Free'\nvar result = sku\n"
    assert load(tmp_path, source).symbol("result", None) == "Free"  # type: ignore[arg-type]
    assert load(tmp_path, source, given={"sku": "Standard"}).symbol("result", None) == "Standard"  # type: ignore[arg-type]
    with pytest.raises(
        SourceError, match=r"param sku: 'Premium' is not one of @allowed \['Free', 'Standard'\]"
    ):
        load(tmp_path, source, "sku=Premium").symbol("result", None)  # type: ignore[arg-type]


def test_loops_conditions_nesting_and_parents(tmp_path: Path) -> None:
    source = (
        HEADER
        + """
param names array = ['a', 'b', 'c']
resource jobs 'Microsoft.Scheduler/jobCollections/jobs@2016-03-01' = [for (name, i) in names: if (
  name != 'b') {
  parent: coll
  name: '${name}-job'
  properties: {
    startTime: '2026-01-0${i + 1}T08:00:00Z'
    action: {
      type: 'Http'
      request: { uri: 'https://example.com/${coll.name}/${i}', method: 'GET' }
    }
    recurrence: { frequency: 'Day', schedule: { hours: [for h in range(8, 2): h] } }
  }
}]
resource other 'Microsoft.Scheduler/jobCollections@2016-03-01' existing = {
  name: 'existing-coll'
  resource nested 'jobs' = {
    name: 'nested'
    properties: { action: { type: 'Http', request: { uri: 'https://example.com', method: 'GET' } } }
  }
}
resource named 'Microsoft.Scheduler/jobCollections/jobs@2016-03-01' = if (length(names) > 5) {
  name: 'coll/never'
  properties: {}
}
"""
    )
    found = read_bicep(load(tmp_path, source))
    plan = build_plan(found, Target("s", "rg"))
    assert [c.name for c in plan.collections] == ["coll"]  # the existing one is not created
    assert [(j.collection, j.name) for j in plan.jobs] == [
        ("coll", "a-job"),
        ("coll", "c-job"),
        ("existing-coll", "nested"),
    ]
    first = plan.jobs[0].body["properties"]
    assert first["startTime"] == "2026-01-01T08:00:00Z"
    assert first["action"]["request"]["uri"] == "https://example.com/coll/0"
    assert first["recurrence"]["schedule"]["hours"] == [8, 9]
    assert plan.jobs[1].body["properties"]["startTime"] == "2026-01-03T08:00:00Z"
    for job in plan.jobs:
        check_job(job)


def test_a_deployed_resources_state_is_refused_by_path(tmp_path: Path) -> None:
    source = (
        HEADER
        + """
resource site 'Microsoft.Web/sites@2022-03-01' existing = { name: 'site' }
resource job 'Microsoft.Scheduler/jobCollections/jobs@2016-03-01' = {
  parent: coll
  name: 'j'
  properties: {
    action: {
      type: 'Http'
      request: { uri: 'https://${site.properties.defaultHostName}', method: 'GET' }
    }
  }
}
"""
    )
    with pytest.raises(Unresolved) as raised:
        read_bicep(load(tmp_path, source))
    assert raised.value.where == "job.properties.action.request.uri"
    assert raised.value.expression == "site.properties"
    given = read_bicep(
        load(tmp_path, source, "job.properties.action.request.uri=https://site.example.com")
    )
    assert given.jobs[0].properties["action"]["request"]["uri"] == "https://site.example.com"


def test_a_secure_param_without_a_value_is_a_missing_secret(tmp_path: Path) -> None:
    source = (
        HEADER
        + """
@secure()
param password string
resource job 'Microsoft.Scheduler/jobCollections/jobs@2016-03-01' = {
  parent: coll
  name: 'j'
  properties: { action: { type: 'Https', request: { uri: 'https://example.com', method: 'GET',
    authentication: { type: 'Basic', username: 'me', password: password } } } }
}
"""
    )
    job = read_bicep(load(tmp_path, source)).jobs[0]
    assert [(m.field, m.source) for m in job.missing] == [
        ("properties.action.request.authentication.password", "password")
    ]


def test_utc_now_only_in_a_params_default_with_an_import_time(tmp_path: Path) -> None:
    source = "param start string = utcNow('yyyy-MM-dd')\nvar result = start\n"
    path = tmp_path / "main.bicep"
    path.write_text(source)
    at = Deployment("s", "rg", "westus", datetime(2026, 3, 2, 9, 0, tzinfo=UTC))
    file = BicepFile(path, given={}, overrides=Overrides(), deployment=at)
    assert file.symbol("result", None) == "2026-03-02"  # type: ignore[arg-type]
    with pytest.raises(Unresolved, match="give --import-time"):
        load(tmp_path, source).symbol("result", None)  # type: ignore[arg-type]
    with pytest.raises(SourceError, match="only allowed in a parameter's default"):
        variable(tmp_path, "utcNow()")


def test_load_functions_read_files_next_to_the_bicep_file(tmp_path: Path) -> None:
    (tmp_path / "body.txt").write_text("hello")
    assert variable(tmp_path, "loadTextContent('body.txt')") == "hello"
    assert variable(tmp_path, "loadFileAsBase64('body.txt')") == "aGVsbG8="
    with pytest.raises(Unresolved, match=r"is not next to main\.bicep"):
        variable(tmp_path, "loadFileAsBase64('cert.pfx')")


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("var x = ", "main.bicep:2:"),
        ("var x = nothing", "declares no param, var or resource 'nothing'"),
        ("var x = if(true, 1, 2)", "Bicep writes conditions as a ? b : c"),
        ("var x = uniqueString('a')", "unpublished"),
    ],
)
def test_refusals(tmp_path: Path, source: str, message: str) -> None:
    with pytest.raises(SourceError, match=None) as raised:
        load(tmp_path, "\n" + source + "\n").symbol("x", None)  # type: ignore[arg-type]
    assert message in str(raised.value)


def test_a_var_that_refers_to_itself_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="refers to itself"):
        variable(tmp_path, "a", "var a = b\nvar b = a")
