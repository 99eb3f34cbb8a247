"""Terraform sources: variables (defaults, .tfvars, --set), locals, templates, references to
resources in the files, functions, count, and the azurerm 1.x field mapping with its notes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scheduler_lib.migrate.compare import check_job
from scheduler_lib.migrate.convert import Target, build_plan
from scheduler_lib.migrate.deployment_functions import Deployment
from scheduler_lib.migrate.hcl_expression import parse_value
from scheduler_lib.migrate.overrides import Overrides
from scheduler_lib.migrate.problems import SourceError, Unresolved
from scheduler_lib.migrate.terraform import Module
from scheduler_lib.migrate.terraform_convert import read_terraform

COLLECTION = """
resource "azurerm_scheduler_job_collection" "jc" {
  name                = "coll"
  location            = "West Europe"
  resource_group_name = "rg"
  sku                 = "standard"
}
"""


def module(tmp_path: Path, source: str, *sets: str, tfvars: str | None = None) -> Module:
    (tmp_path / "main.tf").write_text(source)
    variables = []
    if tfvars is not None:
        (tmp_path / "x.tfvars").write_text(tfvars)
        variables.append(tmp_path / "x.tfvars")
    return Module(
        [tmp_path / "main.tf"],
        tfvars=variables,
        overrides=Overrides(sets),
        deployment=Deployment("s"),
    )


def evaluate(tmp_path: Path, expression: str, prelude: str = "") -> Any:
    loaded = module(tmp_path, prelude + f"\nlocals {{\n  result = {expression}\n}}\n")
    return loaded.local("result")


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('"a-${1 + 2}-$${literal}"', "a-3-${literal}"),
        ('"x\\ty"', "x\ty"),
        ('lower("ABC")', "abc"),
        ('format("%s-%03d", "job", 7)', "job-%03d"),  # only %s %d %v %q: %03d is not a verb here
        ('format("%s-%d", "job", 7)', "job-7"),
        ('join(",", ["a", "b"])', "a,b"),
        ('lookup({a = 1}, "b", 2)', 2),
        ('3 > 2 ? "yes" : "no"', "yes"),
        ('!true || "a" == "a"', True),
        ('{ "k" = 1, k2 = [1, 2] }', {"k": 1, "k2": [1, 2]}),
        ('replace("a.b", ".", "-")', "a-b"),
        ("-2 * 3", -6),
        ('"${true}"', True),  # one interpolation alone keeps its type, as in Terraform
    ],
)
def test_expressions(tmp_path: Path, expression: str, expected: Any) -> None:
    assert evaluate(tmp_path, expression) == expected


def test_variables_from_defaults_tfvars_and_set(tmp_path: Path) -> None:
    source = (
        'variable "name" {\n  default = "dflt"\n}\nvariable "n" {\n  type = number\n}\n'
        'locals {\n  x = "${var.name}-${var.n}"\n}\n'
    )
    assert module(tmp_path, source, "n=3").local("x") == "dflt-3"
    assert module(tmp_path, source, tfvars='name = "given"\nn = 4\n').local("x") == "given-4"
    with pytest.raises(Unresolved, match="variable 'n' has no value"):
        module(tmp_path, source).local("x")


def test_azurerm_fields_become_the_apis_and_the_notes_say_what_changed(tmp_path: Path) -> None:
    source = (
        COLLECTION
        + """
resource "azurerm_scheduler_job" "web" {
  count               = 2
  name                = "web-${count.index}"
  resource_group_name = azurerm_scheduler_job_collection.jc.resource_group_name
  job_collection_name = azurerm_scheduler_job_collection.jc.name
  action_web {
    url = "https://example.com/${count.index}"
    authentication_active_directory {
      tenant_id = "contoso.onmicrosoft.com"
      client_id = "app"
      secret    = "s3cret"
    }
  }
  retry {
    interval = "1.00:00:00"
  }
  recurrence {
    frequency  = "week"
    week_days  = ["monday"]
    hours      = [9]
    minutes    = [30]
    end_time   = "2027-01-01T00:00:00Z"
  }
  start_time = "2026-01-01T00:00:00Z"
  state      = "disabled"
  unknown    = "x"
}
"""
    )
    found = read_terraform(module(tmp_path, source), collection=None, resource_group=None)
    plan = build_plan(found, Target("s"))
    collection = plan.collections[0]
    assert collection.body["location"] == "westeurope"
    assert [j.name for j in plan.jobs] == ["web-0", "web-1"]
    job = plan.jobs[1]
    assert (job.resource_group, job.collection) == ("rg", "coll")
    properties = job.body["properties"]
    assert properties["action"]["type"] == "Https"
    assert properties["action"]["request"]["uri"] == "https://example.com/1"
    assert properties["action"]["request"]["authentication"] == {
        "type": "ActiveDirectoryOAuth",
        "tenant": "contoso.onmicrosoft.com",
        "clientId": "app",
        "secret": "s3cret",
        "audience": "https://management.core.windows.net/",
    }
    assert properties["action"]["retryPolicy"] == {
        "retryType": "Fixed",
        "retryInterval": "P1D",
        "retryCount": 4,
    }
    assert properties["recurrence"] == {
        "frequency": "week",
        "endTime": "2027-01-01T00:00:00Z",
        "schedule": {"minutes": [30], "hours": [9], "weekDays": ["monday"]},
    }
    notes = [str(n) for n in job.notes]
    assert notes == [
        "defaulted: azurerm_scheduler_job.web.action_web.method: not given: azurerm's default, GET",
        "defaulted: azurerm_scheduler_job.web.action_web.authentication_active_directory.audience: "
        "not given: azurerm sends the public cloud's endpoint, https://management.core.windows.net/",
        "defaulted: azurerm_scheduler_job.web.retry.count: not given: azurerm's default, 4",
        "dropped: azurerm_scheduler_job.web.unknown: not an argument of azurerm 1.x's resource",
        "changed: properties.action.retryPolicy.retryInterval: TimeSpan 1.00:00:00 → P1D",
    ]
    assert check_job(job).state == "Disabled"


def test_options_replace_what_the_source_would_be_asked_for(tmp_path: Path) -> None:
    """With --collection and --resource-group, references to resources outside the files
    are not evaluated at all."""
    source = """
resource "azurerm_scheduler_job" "j" {
  name                = "j"
  resource_group_name = azurerm_resource_group.elsewhere.name
  job_collection_name = azurerm_scheduler_job_collection.elsewhere.name
  action_storage_queue {
    storage_account_name = "acct"
    storage_queue_name   = "q"
    sas_token            = data.azurerm_storage_account_sas.sas.sas
    message              = "m"
  }
}
"""
    with pytest.raises(Unresolved, match="give --collection"):
        read_terraform(module(tmp_path, source), collection=None, resource_group=None)
    found = read_terraform(module(tmp_path, source), collection="c", resource_group="rg")
    job = found.jobs[0]
    assert (job.collection, job.resource_group) == ("c", "rg")
    assert [str(n) for n in job.notes if n.kind == "changed"] == [
        "changed: azurerm_scheduler_job.j.job_collection_name: not read: --collection c places it",
        "changed: azurerm_scheduler_job.j.resource_group_name: "
        "not read: --resource-group rg places it",
    ]
    assert [(m.field, m.source) for m in job.missing] == [
        ("properties.action.queueMessage.sasToken", "data.azurerm_storage_account_sas.sas.sas")
    ]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ('"%{ if true }x%{ endif }"', "template directive"),
        ("${[for x in y: x]}", "for expressions are not supported"),
        ("${a.*.b}", "splat expressions are not supported"),
    ],
)
def test_unsupported_syntax_is_named(raw: str, message: str) -> None:
    with pytest.raises(SourceError, match=message):
        parse_value(raw)


def test_for_each_is_refused(tmp_path: Path) -> None:
    source = COLLECTION.replace(
        'sku                 = "standard"', 'sku = "standard"\n  for_each = {}'
    )
    with pytest.raises(SourceError, match="for_each is not supported: use count"):
        read_terraform(module(tmp_path, source), collection=None, resource_group=None)


def test_a_local_that_refers_to_itself_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=r"local\.a: refers to itself"):
        evaluate(tmp_path, "local.a", "locals {\n  a = local.b\n  b = local.a\n}")
