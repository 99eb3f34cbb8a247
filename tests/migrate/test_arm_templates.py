"""Finding the scheduler resources of ARM templates: top-level and nested, every api-version,
copy loops and conditions, `bicep build` output (languageVersion 2.0), and what the import
changes on the way (each a note), checked with the API's own validation."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_lib.migrate.arm_resources import read_resources
from scheduler_lib.migrate.arm_template import Template
from scheduler_lib.migrate.compare import check_collection, check_job
from scheduler_lib.migrate.convert import Target, build_plan
from scheduler_lib.migrate.deployment_functions import Deployment
from scheduler_lib.migrate.overrides import Overrides
from scheduler_lib.migrate.problems import SourceError

JOB = "Microsoft.Scheduler/jobCollections/jobs"
COLLECTION = "Microsoft.Scheduler/jobCollections"
ACTION = {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}}


def plan(document: dict[str, Any], sets: tuple[str, ...] = (), given: dict[str, Any] | None = None):
    template = Template(
        document,
        given=given or {},
        overrides=Overrides(sets),
        deployment=Deployment("s", "rg", "westus"),
    )
    return build_plan(read_resources(template), Target("s", "rg"))


@pytest.mark.parametrize("api_version", ["2014-08-01-preview", "2016-01-01", "2016-03-01"])
def test_top_level_and_nested_jobs_at_every_api_version(api_version: str) -> None:
    document = {
        "resources": [
            {
                "type": COLLECTION,
                "apiVersion": api_version,
                "name": "coll",
                "location": "westus",
                "properties": {"sku": {"name": "Standard"}},
                "resources": [
                    {
                        "type": "jobs",
                        "apiVersion": api_version,
                        "name": "nested",
                        "properties": {"action": ACTION},
                    },
                    {
                        "type": JOB,
                        "apiVersion": api_version,
                        "name": "coll/nested-full",
                        "properties": {"action": ACTION},
                    },
                ],
            },
            {
                "type": JOB,
                "apiVersion": api_version,
                "name": "coll/top",
                "dependsOn": ["coll"],
                "properties": {
                    "action": ACTION,
                    "recurrence": {"frequency": "Hour", "interval": 2},
                },
            },
        ]
    }
    result = plan(document)
    assert [c.name for c in result.collections] == ["coll"]
    assert [(j.collection, j.name) for j in result.jobs] == [
        ("coll", "nested"),
        ("coll", "nested-full"),
        ("coll", "top"),
    ]
    for job in result.jobs:
        check_job(job)  # the API's validation accepts every one


def test_copy_loops_and_conditions() -> None:
    document = {
        "parameters": {"names": {"type": "array", "defaultValue": ["a", "b", "c"]}},
        "resources": [
            {
                "type": JOB,
                "apiVersion": "2016-03-01",
                "name": "[concat('coll/', parameters('names')[copyIndex()])]",
                "condition": "[not(equals(copyIndex(), 1))]",
                "copy": {"name": "jobs", "count": "[length(parameters('names'))]"},
                "properties": {
                    "action": {
                        "type": "Http",
                        "request": {
                            "uri": "[format('https://example.com/{0}', copyIndex('jobs', 100))]",
                            "method": "GET",
                        },
                    }
                },
            }
        ],
    }
    jobs = plan(document).jobs
    assert [j.name for j in jobs] == ["a", "c"]
    assert [j.body["properties"]["action"]["request"]["uri"] for j in jobs] == [
        "https://example.com/100",
        "https://example.com/102",
    ]


def test_old_api_quirks_are_rewritten_with_notes() -> None:
    """As the 2014 documentation wrote them: integers as strings, capitalised keys, a
    TimeSpan retry interval, a read-only status."""
    document = {
        "resources": [
            {
                "type": COLLECTION,
                "apiVersion": "2014-08-01-preview",
                "name": "c",
                "properties": {
                    "sku": {"name": "standard"},
                    "quota": {
                        "maxJobCount": "10",
                        "maxRecurrence": {"Frequency": "minute", "interval": "1"},
                    },
                },
                "resources": [
                    {
                        "type": "jobs",
                        "apiVersion": "2014-08-01-preview",
                        "name": "j",
                        "properties": {
                            "startTime": "2015-02-10T00:08:00Z",
                            "state": "enabled",
                            "status": {"executionCount": 3},
                            "action": {
                                "type": "http",
                                "request": {"uri": "https://example.com", "method": "POST"},
                                "retryPolicy": {
                                    "retryType": "Fixed",
                                    "retryInterval": "00:01:00",
                                    "retryCount": "2",
                                },
                            },
                            "recurrence": {"frequency": "minute", "interval": 1},
                        },
                    }
                ],
            }
        ]
    }
    result = plan(document)
    collection, job = result.collections[0], result.jobs[0]
    assert check_collection(collection)["properties"]["quota"] == {
        "maxJobCount": 10,
        "maxRecurrence": {"frequency": "Minute", "interval": 1},
    }
    checked = check_job(job)
    assert checked.wire["action"]["retryPolicy"] == {
        "retryType": "Fixed",
        "retryInterval": "PT1M",
        "retryCount": 2,
    }
    notes = [str(n) for n in collection.notes + job.notes]
    assert "changed: properties.quota.maxJobCount: the string '10' read as the integer 10" in notes
    assert "changed: properties.action.retryPolicy.retryInterval: TimeSpan 00:01:00 → PT1M" in notes
    assert (
        "dropped: resources[0].resources[0].properties.status: read-only: the scheduler keeps it"
        in notes
    )


def test_bicep_build_output_with_symbolic_names() -> None:
    document = {
        "languageVersion": "2.0",
        "parameters": {"prefix": {"type": "string", "defaultValue": "nightly"}},
        "resources": {
            "coll": {
                "type": COLLECTION,
                "apiVersion": "2016-03-01",
                "existing": True,
                "name": "shared",
            },
            "job": {
                "type": JOB,
                "apiVersion": "2016-03-01",
                "name": "[format('{0}/{1}', 'shared', format('{0}-report', parameters('prefix')))]",
                "properties": {"action": ACTION},
            },
        },
    }
    result = plan(document)
    assert result.collections == []  # `existing`: not created, not imported
    assert [(j.collection, j.name) for j in result.jobs] == [("shared", "nightly-report")]


def test_a_job_location_and_unknown_envelope_keys_are_dropped_with_a_note() -> None:
    document = {
        "resources": [
            {
                "type": JOB,
                "apiVersion": "2016-03-01",
                "name": "c/j",
                "location": "westus",
                "kind": "x",
                "properties": {"action": ACTION},
            }
        ]
    }
    notes = [str(n) for n in plan(document).jobs[0].notes]
    assert notes == [
        "dropped: resources[0].location: a job has no location or tags in the API",
        "dropped: resources[0].kind: not part of the 2016-03-01 API",
    ]


@pytest.mark.parametrize(
    ("resource", "message"),
    [
        (
            {"type": JOB, "name": "just-a-job", "properties": {}},
            "resources[0].name: 'just-a-job': a job's name is 'collection/job'",
        ),
        (
            {"type": COLLECTION, "name": "a/b", "properties": {}},
            "resources[0].name: 'a/b': a job collection's name has no '/'",
        ),
        (
            {
                "type": "Microsoft.Resources/deployments",
                "name": "inner",
                "properties": {"template": {"resources": [{"type": JOB}]}},
            },
            "resources[0]: a nested deployment holds scheduler resources",
        ),
        (
            {"type": JOB, "name": "c/j", "copy": {"name": "l", "count": 801}, "properties": {}},
            "resources[0].copy.count: a copy count must be an integer 0-800",
        ),
        (
            {"type": JOB, "name": "c/j", "copy": {"name": 7, "count": 1}, "properties": {}},
            "resources[0].copy.name: must be a string",
        ),
    ],
)
def test_malformed_resources_are_refused_by_path(resource: dict[str, Any], message: str) -> None:
    with pytest.raises(SourceError) as raised:
        plan({"resources": [resource]})
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("sections", "message"),
    [
        ({"parameters": ["n"]}, "parameters: must be an object"),
        ({"parameters": {"n": "string"}}, "parameters.n: must be an object (its declaration)"),
        ({"variables": {"copy": {"name": "m"}}}, "variables.copy: must be an array of copy loops"),
        ({"variables": {"copy": ["m"]}}, "variables.copy[0]: must be an object"),
    ],
)
def test_malformed_template_sections_are_refused_by_path(
    sections: dict[str, Any], message: str
) -> None:
    """A section of another shape than ARM's is a SourceError naming it (it was a crash)."""
    name = "[parameters('n')]" if "parameters" in sections else "[variables('m')]"
    resource = {"type": COLLECTION, "name": name, "properties": {}}
    with pytest.raises(SourceError) as raised:
        plan({**sections, "resources": [resource]})
    assert message in str(raised.value)


def test_a_missing_secret_imports_the_job_disabled_with_a_note() -> None:
    document = {
        "parameters": {"password": {"type": "securestring"}},
        "resources": [
            {
                "type": JOB,
                "apiVersion": "2016-03-01",
                "name": "c/j",
                "properties": {
                    "state": "Enabled",
                    "action": {
                        "type": "Https",
                        "request": {
                            "uri": "https://example.com",
                            "method": "GET",
                            "authentication": {
                                "type": "Basic",
                                "username": "me",
                                "password": "[parameters('password')]",
                            },
                        },
                    },
                },
            }
        ],
    }
    job = plan(document).jobs[0]
    properties = job.body["properties"]
    assert properties["state"] == "Disabled"
    assert properties["action"]["request"]["authentication"]["password"] == "MISSING-SECRET"
    assert "properties.action.request.authentication.password" in properties["pauseNote"]
    assert "parameter 'password' has no value" in properties["pauseNote"]
    assert job.api_version == "2026-12-01"
    assert check_job(job).state == "Disabled"
    given = plan(document, given={"password": "s3cret"}).jobs[0]
    assert given.body["properties"]["state"] == "Enabled"
    assert given.body["properties"]["action"]["request"]["authentication"]["password"] == "s3cret"


def test_an_unknown_outside_a_secret_refuses_the_import() -> None:
    document = {
        "parameters": {"host": {"type": "string"}},
        "resources": [
            {
                "type": JOB,
                "apiVersion": "2016-03-01",
                "name": "c/j",
                "properties": {
                    "action": {
                        "type": "Http",
                        "request": {
                            "uri": "[concat('https://', parameters('host'))]",
                            "method": "GET",
                        },
                    }
                },
            }
        ],
    }
    with pytest.raises(SourceError) as raised:
        plan(document)
    assert str(raised.value).startswith(
        "resources[0].properties.action.request.uri: parameters('host') cannot be evaluated here: "
        "parameter 'host' has no value (give it in --parameters FILE or with --set host=VALUE"
    )


def test_an_unused_set_is_an_error_not_ignored() -> None:
    from scheduler_lib.migrate.overrides import Overrides as Sets

    sets = Sets(["typo.path=1"])
    with pytest.raises(SourceError, match=r"typo\.path matches no parameter and no path"):
        sets.check_all_used()
